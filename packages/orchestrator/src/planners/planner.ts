/** One interface for every planner: given the symptom, the catalog and the steps so far, reply with text. */
import type { Catalog } from "../catalog.ts";

export interface StepRecord {
  step: number;
  /** `<server>/<tool>` as validated. */
  tool: string;
  params: Record<string, unknown>;
  ok: boolean;
  result?: Record<string, unknown>;
  error?: { code: string; message: string };
}

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
  /** The raw reply: one JSON call or one JSON label, validated by the triage loop (never trusted). */
  next(input: PlannerInput): Promise<string>;
}
