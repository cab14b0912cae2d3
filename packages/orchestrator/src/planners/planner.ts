/** One interface for every planner: given the symptom, the catalog and the steps so far, answer one turn. */
import type { Catalog } from "../catalog.ts";
import type { ErrorInfo } from "../errors.ts";
import type { Label } from "../labels.ts";

/** A call as the loop validated it, and the server's result (JSON as it came) or the call's coded failure. */
export type StepRecord = {
  step: number;
  /** `<server>/<tool>` as validated. */
  tool: string;
  params: Record<string, unknown>;
} & ({ ok: true; result: Record<string, unknown> } | { ok: false; error: ErrorInfo });

/** A turn decided in code (the rules planner): checked like a model's reply, with no text to parse. */
export type Decision = { tool: string; params: Record<string, unknown> } | { label: Label; reason: string };

/**
 * A planner's answer: a model's raw text, of which exactly one JSON object is required (never trusted), or a
 * Decision. The triage loop checks both the same way.
 */
export type Reply = string | Decision;

export interface PlannerInput {
  symptom: string;
  catalog: Catalog;
  history: readonly StepRecord[];
  /** Set when the previous reply was invalid: one repair is allowed. */
  repair?: { reply: string; code: string; message: string; suggestions?: string[] };
  /** The step budget is spent: only a label is accepted now. */
  final?: boolean;
  signal?: AbortSignal;
}

export interface Planner {
  readonly name: string;
  next(input: PlannerInput): Promise<Reply>;
}
