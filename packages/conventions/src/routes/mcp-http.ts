/** POST /mcp: stateless Streamable HTTP (the SDK is loaded on the first request); GET and DELETE answer 405. */
import type { FastifyInstance } from "fastify";
import type { Runtime } from "../runtime.ts";

export function registerMcpHttp(app: FastifyInstance, runtime: Runtime<unknown>): void {
  app.post("/mcp", async (request, reply) => {
    const { handleMcpPost } = await import("../mcp-transports.ts");
    await handleMcpPost(request, reply, runtime);
  });
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
