/** POST /mcp: stateless Streamable HTTP (the SDK is loaded on the first request); GET and DELETE answer 405. */
import type { FastifyInstance } from "fastify";
import type { McpIdentity } from "../mcp.ts";
import type { BaseContext } from "../run-tool.ts";
import type { AnyTool } from "../tool.ts";

export function registerMcpHttp(
  app: FastifyInstance,
  identity: McpIdentity,
  tools: readonly AnyTool[],
  base: BaseContext,
): void {
  app.post("/mcp", async (request, reply) => {
    const { handleMcpPost } = await import("../mcp.ts");
    await handleMcpPost(request, reply, identity, tools, base);
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
