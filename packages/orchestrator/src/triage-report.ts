/**
 * A triage run's outcome as it leaves the orchestrator: `roadnerd triage --json` prints it, the gateway's
 * triage tool answers it (without metrics), the evaluation parses it. One schema, the types inferred from it.
 */
import { z } from "zod";
import { LABELS } from "./labels.ts";

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
  run_id: z.string(),
  metrics: metricsSchema,
});

/** What the gateway's triage tool answers. */
export const triageToolResultSchema = triageReportSchema.omit({ metrics: true });

export type Evidence = z.infer<typeof evidenceSchema>;
export type TriageMetrics = z.infer<typeof metricsSchema>;
export type TriageReport = z.infer<typeof triageReportSchema>;
