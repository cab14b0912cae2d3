/** MCP over Streamable HTTP (stateless: a fresh Server and transport per POST) and over stdio. */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { FastifyReply, FastifyRequest } from "fastify";
import { createMcpServer } from "./mcp.ts";
import type { Runtime } from "./runtime.ts";

/** Stateless Streamable HTTP: the SDK forbids reusing a Server or a transport across requests. */
export async function handleMcpPost(
  request: FastifyRequest,
  reply: FastifyReply,
  runtime: Runtime<unknown>,
): Promise<void> {
  const server = createMcpServer(runtime);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  reply.hijack();
  reply.raw.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(request.raw, reply.raw, request.body);
}

export async function serveStdio(runtime: Runtime<unknown>): Promise<void> {
  const server = createMcpServer(runtime);
  await server.connect(new StdioServerTransport());
}
