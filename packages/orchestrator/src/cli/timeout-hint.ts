/**
 * A call that ran out of time on the servers' default deadline says how to give it more (ADR 0054): a slow or
 * busy machine needs a larger `timeout_ms`, once per call or for every call the CLI makes.
 */
import type { ErrorInfo } from "../errors.ts";

export function timeoutHint(error: ErrorInfo, params: Readonly<Record<string, unknown>>): ErrorInfo {
  if (error.code !== "E_TIMEOUT" || error.hint || params.timeout_ms !== undefined) return error;
  return {
    ...error,
    hint: "a slow or busy machine: timeout_ms=5000 for this call, ROADNERD_TIMEOUT_MS=5000 for every call",
  };
}
