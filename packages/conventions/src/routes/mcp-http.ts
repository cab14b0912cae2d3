/**
 * POST /mcp: stateless Streamable HTTP (the SDK is loaded on the first request); GET and DELETE answer 405.
 * Errors on this route are JSON-RPC errors, not the REST body: malformed JSON is −32700.
 */
import type { FastifyInstance } from "fastify";
import { toDiagError } from "../errors.ts";
import type { Runtime } from "../runtime.ts";

const rpc = (code: number, message: string, ours: string) => ({
  jsonrpc: "2.0" as const,
  id: null,
  error: { code, message, data: { code: ours } },
});

export function registerMcpHttp(app: FastifyInstance, runtime: Runtime<unknown>): void {
  app.post(
    "/mcp",
    {
      errorHandler: (err, _request, reply) => {
        const diag = toDiagError(err);
        const parse = diag.code === "E_INVALID_INPUT" && /malformed JSON/.test(diag.message);
        if (diag.retryAfterS !== undefined) void reply.header("retry-after", String(diag.retryAfterS));
        if (diag.code === "E_INTERNAL") runtime.log.error({ err }, "mcp request failed");
        void reply
          .code(diag.status)
          .send(
            rpc(
              parse ? -32700 : diag.code === "E_INTERNAL" ? -32603 : -32600,
              parse ? `Parse error: ${diag.message}` : diag.message,
              diag.code,
            ),
          );
      },
    },
    async (request, reply) => {
      const { handleMcpPost } = await import("../mcp-transports.ts");
      await handleMcpPost(request, reply, runtime);
    },
  );
  app.route({
    method: ["GET", "DELETE"],
    url: "/mcp",
    handler: async (_request, reply) =>
      reply
        .code(405)
        .header("allow", "POST")
        .send({
          jsonrpc: "2.0",
          error: { code: -32000, message: "Method not allowed: this server is stateless, use POST" },
          id: null,
        }),
  });
}
