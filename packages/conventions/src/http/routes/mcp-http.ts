/**
 * POST /mcp: stateless Streamable HTTP (the SDK is loaded on the first request); GET and DELETE answer 405.
 * Errors on this route are JSON-RPC errors, not the REST body: malformed JSON is −32700.
 */
import type { FastifyInstance } from "fastify";
import { BODY_LIMIT_BYTES } from "../../define/limits.ts";
import { toDiagError } from "../../errors/errors.ts";
import { RPC, rpcError, transportErrorBody } from "../../mcp/rpc.ts";
import type { Runtime } from "../../runtime/runtime.ts";
import { bodyTooLarge } from "../error-replies.ts";
import { unlessAnswered } from "../in-flight.ts";
import { MalformedJsonError } from "../json-body.ts";

type Transports = typeof import("../../mcp/transports.ts");

export function registerMcpHttp(app: FastifyInstance, runtime: Runtime<unknown>): void {
  // Loaded on the first POST, then kept: an import() per request resolves the module again each time (ADR 0037).
  let transports: Promise<Transports> | undefined;
  app.post(
    "/mcp",
    {
      errorHandler: (err, _request, reply) => {
        if ((err as { statusCode?: number }).statusCode === 415) {
          // As the SDK's transport says it.
          return void reply
            .code(415)
            .send(
              rpcError(
                null,
                RPC.TransportError,
                "Unsupported Media Type: Content-Type must be application/json",
                "E_INVALID_INPUT",
              ),
            );
        }
        const diag = bodyTooLarge(err, reply, BODY_LIMIT_BYTES) ?? toDiagError(err);
        const parse = diag instanceof MalformedJsonError;
        if (diag.retryAfterS !== undefined) void reply.header("retry-after", String(diag.retryAfterS));
        if (diag.code === "E_INTERNAL") runtime.log.error({ err }, "mcp request failed");
        const code = parse ? RPC.ParseError : diag.code === "E_INTERNAL" ? RPC.InternalError : RPC.InvalidRequest;
        void reply
          .code(diag.status)
          .send(rpcError(null, code, parse ? `Parse error: ${diag.message}` : diag.message, diag.code));
      },
    },
    async (request, reply) => {
      transports ??= import("../../mcp/transports.ts");
      const { handleMcpPost } = await transports;
      // The reply goes back while a progress stream is still being written; none after a shutdown answer.
      return unlessAnswered(reply, handleMcpPost(request, reply, runtime));
    },
  );
  app.route({
    method: ["GET", "DELETE"],
    url: "/mcp",
    handler: async (_request, reply) =>
      reply
        .code(405)
        .header("allow", "POST")
        .send(transportErrorBody("Method not allowed: this server is stateless, use POST")),
  });
}
