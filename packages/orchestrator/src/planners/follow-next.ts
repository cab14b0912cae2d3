/**
 * A result's `next` (which tool, with what, why: the server's own knowledge of the next step) as a planner's
 * decision: the call it names, when the catalog has that tool, the budget allows a call and it was not made yet.
 */
import { nextField } from "@roadnerd/conventions";
import type { Decision, PlannerInput } from "./planner.ts";

export function followNext(input: PlannerInput): Decision | undefined {
  const last = input.history.at(-1);
  if (input.final || !last?.ok) return undefined;
  const hint = nextField.safeParse(last.result.next).data;
  if (!hint || !input.catalog.get(hint.tool)) return undefined;
  const args = JSON.stringify(hint.args);
  if (input.history.some((s) => s.tool === hint.tool && JSON.stringify(s.params) === args)) return undefined;
  return { tool: hint.tool, params: hint.args };
}
