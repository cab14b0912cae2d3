/** MCP over Streamable HTTP (stateless: a fresh Server and transport per POST) and over stdio. */
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyReply, FastifyRequest } from "fastify";
import { RETRY_AFTER_S } from "./limiter.ts";
import { createMcpServer } from "./mcp.ts";
import { checkMessage, rpcError } from "./mcp-guard.ts";
import { LineTransport } from "./mcp-stdio.ts";
import type { Runtime } from "./runtime.ts";

/** The largest stdio message, as the HTTP body limit: tool inputs are small. */
export const MAX_STDIO_MESSAGE_BYTES = 64 * 1024;

/** Stateless Streamable HTTP: the SDK forbids reusing a Server or a transport across requests. */
export async function handleMcpPost(
  request: FastifyRequest,
  reply: FastifyReply,
  runtime: Runtime<unknown>,
): Promise<void> {
  const checked = checkMessage(request.body);
  if (!checked.ok) {
    if (!checked.response) return void reply.code(202).send();
    return void reply.code(checked.status).send(checked.response);
  }
  const message = checked.message as { id?: string | number; method?: string };
  // At the call bound, refuse before building anything: 503 with Retry-After, as on /actions.
  if (message.method === "tools/call" && runtime.calls.active >= runtime.calls.max) {
    const busy = rpcError(message.id ?? null, ErrorCode.InternalError, "server busy: retry later", "E_BUSY");
    return void reply.code(503).header("retry-after", String(RETRY_AFTER_S)).send(busy);
  }
  const server = createMcpServer(runtime);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  reply.hijack();
  reply.raw.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(request.raw, reply.raw, checked.message);
}

export async function serveStdio(runtime: Runtime<unknown>): Promise<void> {
  // A reader that went away (EPIPE) or a full disk behind stdout: nothing left to say to anyone; leave quietly.
  process.stdout.on("error", () => process.exit(0));
  const server = createMcpServer(runtime);
  await server.connect(new LineTransport(process.stdin, process.stdout, MAX_STDIO_MESSAGE_BYTES));
}
