/**
 * A model behind any OpenAI-compatible chat endpoint (llama.cpp server, Ollama, vLLM): the spec's system
 * and repair prompts, one tool per turn, a 3B or 13B profile (temperature, max_tokens, turns kept).
 */
import { cutText } from "@roadnerd/conventions";
import { cutView, viewOf } from "@roadnerd/conventions/internal";
import { type ChatEndpoint, type ChatMessage, chatCompletion } from "../chat.ts";
import type { Planner, PlannerInput, StepRecord } from "./planner.ts";
import {
  FINAL_QUESTION,
  FIRST_QUESTION,
  type ModelProfile,
  NEXT_QUESTION,
  PROFILES,
  type ProfileName,
  REPAIR_PROMPT,
  systemPrompt,
} from "./prompts.ts";

export interface OpenAiOptions extends ChatEndpoint {
  profile?: ProfileName | ModelProfile;
}

export type { ChatMessage } from "../chat.ts";
export { OpenAiError } from "../chat.ts";

/** The conversation for one turn: system + symptom, the last `turns` calls with their results, then the ask. */
export function buildMessages(input: PlannerInput, profile: ModelProfile): ChatMessage[] {
  const earlier = input.history.slice(0, Math.max(0, input.history.length - profile.turns));
  const kept = input.history.slice(earlier.length);
  const intro = [`Symptom: ${input.symptom || "no internet"}`];
  if (earlier.length) {
    intro.push(`Already called: ${earlier.map((s) => `${s.tool} (${s.ok ? "ok" : s.error?.code})`).join(", ")}`);
  }
  const messages: ChatMessage[] = [
    { role: "system", content: systemPrompt(input.catalog.text()) },
    // No tools at all (a budget of 0, the evaluation's baseline): the symptom, then straight to the label.
    ...(input.final && input.history.length === 0
      ? []
      : [{ role: "user" as const, content: [...intro, FIRST_QUESTION].join("\n") }]),
  ];
  for (const s of kept) {
    messages.push({ role: "assistant", content: JSON.stringify({ tool: s.tool, params: s.params }) });
    messages.push({ role: "user", content: `Result: ${resultView(input, s, profile)}\n${NEXT_QUESTION}` });
  }
  if (input.final) {
    const noTools = input.history.length === 0;
    messages.push({ role: "user", content: noTools ? [...intro, FINAL_QUESTION].join("\n") : FINAL_QUESTION });
  }
  if (input.repair) {
    messages.push({ role: "assistant", content: cutText(input.repair.reply, 400) });
    const hint = input.repair.suggestions?.length ? ` Did you mean: ${input.repair.suggestions.join(", ")}?` : "";
    messages.push({ role: "user", content: `${REPAIR_PROMPT} (${input.repair.message})${hint}` });
  }
  return messages;
}

/**
 * A step's result as the model reads it: the tool's model view (verdict first, then the fields that decide the
 * next step), cut to the profile's room without ever cutting the verdict line; a failure as its coded error.
 */
export function resultView(input: PlannerInput, s: StepRecord, profile: ModelProfile): string {
  if (!s.ok) return cutText(JSON.stringify({ error: s.error }), profile.result_chars);
  const tool = input.catalog.get(s.tool)?.definition;
  const view = tool && viewOf(tool, s.result);
  return view === undefined
    ? cutText(JSON.stringify(s.result), profile.result_chars)
    : cutView(view, profile.result_chars);
}

export class OpenAiPlanner implements Planner {
  readonly name = "openai";
  readonly #options: OpenAiOptions;
  readonly #profile: ModelProfile;

  constructor(options: OpenAiOptions) {
    this.#options = options;
    this.#profile = typeof options.profile === "object" ? options.profile : PROFILES[options.profile ?? "3b"];
  }

  async next(input: PlannerInput): Promise<string> {
    const { temperature, max_tokens } = this.#profile;
    const messages = buildMessages(input, this.#profile);
    return chatCompletion(this.#options, messages, { temperature, max_tokens }, input.signal);
  }
}
