/**
 * RFC 9457 problem details, for clients that ask for them (`Accept: application/problem+json`): the same
 * failure as our `{error:{code,message,hint}}` body, with `code`, `hint` and `run_id` kept as extension
 * members so a client matches on `code` either way. Without that Accept, nothing changes.
 */
import { STATUS_CODES } from "node:http";
import type { FastifyRequest } from "fastify";
import type { DiagError } from "../errors/errors.ts";

export const PROBLEM_JSON = "application/problem+json";

/** The client listed application/problem+json in Accept (with q above 0). */
export function wantsProblem(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? "";
  return accept.split(",").some((range) => {
    const [type, ...params] = range.split(";").map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith("q="));
    return type === PROBLEM_JSON && (q === undefined || Number(q.slice(2)) > 0);
  });
}

export function problemBody(err: DiagError, request: FastifyRequest, runId?: string): string {
  return JSON.stringify({
    type: "about:blank",
    title: STATUS_CODES[err.status] ?? "Error",
    status: err.status,
    detail: err.message,
    instance: request.url.split("?")[0]?.slice(0, 200),
    code: err.code,
    ...(err.hint ? { hint: err.hint } : {}),
    ...(runId ? { run_id: runId } : {}),
  });
}
