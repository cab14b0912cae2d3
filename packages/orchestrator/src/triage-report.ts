/**
 * A triage run's outcome as it leaves the orchestrator: `roadnerd triage --json` prints it, the gateway's
 * triage tool answers it (without metrics), the evaluation parses it. One schema, the types inferred from it.
 */
import { oneLine } from "@roadnerd/conventions";
import { z } from "zod";
import { LABELS, type Label } from "./labels.ts";

/** The hint's length: short enough for a 3B brainstorm prompt, long enough for a reason and two summaries. */
export const CATEGORY_HINT_CHARS = 240;

export const evidenceSchema = z.object({
  tool: z.string().describe("`<server>/<tool>`"),
  params: z.record(z.string(), z.unknown()),
  ok: z.boolean(),
  summary: z.string().optional().describe("the result's one line"),
  error: z.object({ code: z.string(), message: z.string() }).optional().describe("why the call failed"),
});

export const metricsSchema = z.object({
  replies: z.number().int().describe("planner replies, repairs included"),
  valid_first_try: z.number().int(),
  repairs: z.number().int(),
  tool_errors: z.number().int(),
  timeouts: z.number().int(),
  duration_ms: z.number().int().describe("first planner turn to label, attaches included"),
});

export const triageReportSchema = z.object({
  label: z.enum(LABELS),
  reason: z.string().describe("one line"),
  steps: z.number().int().describe("tool calls made"),
  evidence: z.array(evidenceSchema),
  category_hint: z
    .string()
    .describe(
      "the label and its evidence in one line, for the brainstorm step (`<label>: <reason> · <tool>: <summary>`)",
    ),
  run_id: z.string(),
  metrics: metricsSchema,
});

/** What the gateway's triage tool answers. */
export const triageToolResultSchema = triageReportSchema.omit({ metrics: true });

export type Evidence = z.infer<typeof evidenceSchema>;
export type TriageMetrics = z.infer<typeof metricsSchema>;
export type TriageReport = z.infer<typeof triageReportSchema>;

/**
 * The hand-off to brainstorming: `<label>: <reason>`, then what each call showed (its summary or error code),
 * one line, cut to CATEGORY_HINT_CHARS.
 */
export function categoryHint(label: Label, reason: string, evidence: readonly Evidence[]): string {
  const seen = evidence.map((e) => `${e.tool}: ${e.ok ? e.summary || "ok" : (e.error?.code ?? "failed")}`);
  return oneLine([`${label}: ${reason}`, ...seen].join(" · "), CATEGORY_HINT_CHARS);
}
