/** Every failure leaves as our error body with its status; unknown routes say where the tools are. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { validRunId } from "../define/fields.ts";
import { DiagError, errorBody, toDiagError } from "../errors/errors.ts";
import { PROBLEM_JSON, problemBody, wantsProblem } from "./problem.ts";

/** Our error body, or RFC 9457 problem details when the client asks for them. */
function sendError(request: FastifyRequest, reply: FastifyReply, diag: DiagError, runId?: string): void {
  if (wantsProblem(request)) {
    void reply
      .code(diag.status)
      .type(PROBLEM_JSON)
      .send(problemBody(diag, request, runId));
    return;
  }
  void reply.code(diag.status).send(errorBody(diag, runId));
}

/**
 * A body over the limit (Fastify's FST_ERR_CTP_BODY_TOO_LARGE: at once when Content-Length says so, else as soon
 * as the chunks pass it): 413 E_TOO_LARGE, and the connection closed after the answer, so the rest is never read
 * (kept alive, Node would read and drop the whole body, 100 MB of it, before the next request).
 */
export function bodyTooLarge(err: unknown, reply: FastifyReply, bodyLimit: number): DiagError | undefined {
  if ((err as { code?: string } | null)?.code !== "FST_ERR_CTP_BODY_TOO_LARGE") return undefined;
  void reply.header("connection", "close");
  return new DiagError("E_TOO_LARGE", `request body larger than ${bodyLimit} bytes`, {
    hint: "tool inputs are small: send only the tool's fields (GET /actions/<tool> shows them)",
  });
}

export function registerErrorReplies(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((err, request, reply) => {
    const diag = bodyTooLarge(err, reply, bodyLimit) ?? toDiagError(err);
    if (diag.code === "E_INTERNAL") request.log.error({ err }, "request failed");
    const body = request.body as { run_id?: unknown } | undefined;
    if (diag.retryAfterS !== undefined) void reply.header("retry-after", String(diag.retryAfterS));
    if (diag.code === "E_UNAUTHORIZED") void reply.header("www-authenticate", 'Bearer realm="roadnerd"');
    sendError(request, reply, diag, validRunId(body?.run_id));
  });

  app.setNotFoundHandler((request, reply) => {
    const err = new DiagError("E_UNKNOWN_TOOL", `no route ${request.method} ${request.url.slice(0, 80)}`, {
      hint: "try GET /actions for the tool list, POST /actions/<tool>, GET /sse/<tool>",
    });
    sendError(request, reply, err);
  });
}
