/** A finished call into the metrics: its outcome, its time, and (when the policy refused a target) why. */
import { DiagError } from "../errors/errors.ts";
import type { Metrics } from "./metrics.ts";
import { refusalReason } from "./refusal-reason.ts";

const since = (started: number) => (performance.now() - started) / 1000;

export function observeAnswer(metrics: Metrics, tool: string, started: number): void {
  metrics.observeCall(tool, "ok", since(started));
}

export function observeFailure(metrics: Metrics, tool: string, started: number, err: unknown): void {
  const code = err instanceof DiagError ? err.code : "E_INTERNAL";
  metrics.observeCall(tool, code, since(started));
  if (code === "E_FORBIDDEN" && err instanceof DiagError) metrics.outboundRefused(refusalReason(err));
}
