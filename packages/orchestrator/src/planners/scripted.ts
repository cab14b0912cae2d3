/** A planner that replays a fixed list of replies (tests and the evaluation's simulated small models). */
import type { Planner } from "./planner.ts";

export class ScriptedPlanner implements Planner {
  readonly name = "scripted";
  readonly #replies: string[];
  #next = 0;

  constructor(replies: readonly string[]) {
    this.#replies = [...replies];
  }

  /** Replies not used yet (a test asserts the script was followed to its end). */
  get remaining(): number {
    return this.#replies.length - this.#next;
  }

  async next(): Promise<string> {
    const reply = this.#replies[this.#next];
    this.#next += 1;
    // An exhausted script answers like a model that has nothing left to say.
    return reply ?? "";
  }
}
