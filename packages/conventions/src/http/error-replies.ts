/** Every failure leaves as our error body with its status; unknown routes say where the tools are. */
import type { FastifyInstance } from "fastify";
import { DiagError, errorBody, toDiagError } from "../errors.ts";

export function registerErrorReplies(app: FastifyInstance): void {
  app.setErrorHandler((err, request, reply) => {
    const diag = toDiagError(err);
    if (diag.code === "E_INTERNAL") request.log.error({ err }, "request failed");
    const body = request.body as { run_id?: unknown } | undefined;
    const runId = typeof body?.run_id === "string" ? body.run_id : undefined;
    void reply.code(diag.status).send(errorBody(diag, runId));
  });

  app.setNotFoundHandler((request, reply) => {
    const err = new DiagError("E_UNKNOWN_TOOL", `no route ${request.method} ${request.url.slice(0, 80)}`, {
      hint: "try GET /actions for the tool list, POST /actions/<tool>, GET /sse/<tool>",
    });
    void reply.code(err.status).send(errorBody(err));
  });
}
