/**
 * MCP over Streamable HTTP, stateless with JSON responses, and over stdio. Over HTTP the SDK's own transport
 * would convert every POST to a Fetch Request and back and build a Server for it (2.6× the cost of
 * /actions); instead one Server per runtime is fed through MuxTransport, and the few HTTP rules of the
 * transport (Accept, Content-Type, protocol version, 202 for notifications) are applied here as the SDK
 * applies them. The MCP conformance suite checks the result.
 */

import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  ErrorCode,
  isInitializeRequest,
  isJSONRPCRequest,
  type JSONRPCRequest,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import type { FastifyReply, FastifyRequest } from "fastify";
import { RETRY_AFTER_S } from "./limiter.ts";
import { callTool, createMcpServer, listTools } from "./mcp.ts";
import { checkMessage, rpcError } from "./mcp-guard.ts";
import { MuxTransport } from "./mcp-mux.ts";
import { LineTransport } from "./mcp-stdio.ts";
import type { Runtime } from "./runtime.ts";

/** The largest stdio message, as the HTTP body limit: tool inputs are small. */
export const MAX_STDIO_MESSAGE_BYTES = 64 * 1024;

const servers = new WeakMap<Runtime<unknown>, { server: Server; mux: MuxTransport }>();

async function muxFor(runtime: Runtime<unknown>): Promise<MuxTransport> {
  let entry = servers.get(runtime);
  if (!entry) {
    const server = createMcpServer(runtime);
    const mux = new MuxTransport();
    entry = { server, mux };
    servers.set(runtime, entry);
    await server.connect(mux);
  }
  return entry.mux;
}

/** The answer to a plain tools/list or tools/call without the SDK's dispatch, or undefined for anything else. */
function directResult(runtime: Runtime<unknown>, message: JSONRPCRequest, signal: AbortSignal) {
  if (message.method === "tools/list" && message.params?.cursor === undefined)
    return Promise.resolve(listTools(runtime));
  if (message.method !== "tools/call") return undefined;
  const params = message.params as { name: string; arguments?: Record<string, unknown> };
  return callTool(runtime, params, signal);
}

/** As the SDK's transport answers a request it cannot take: a JSON-RPC error with id null. */
function transportError(reply: FastifyReply, status: number, message: string): void {
  void reply.code(status).send({ jsonrpc: "2.0", error: { code: -32000, message }, id: null });
}

export async function handleMcpPost(
  request: FastifyRequest,
  reply: FastifyReply,
  runtime: Runtime<unknown>,
): Promise<void> {
  const accept = request.headers.accept ?? "";
  if (!accept.includes("application/json") || !accept.includes("text/event-stream")) {
    return transportError(reply, 406, "Not Acceptable: Client must accept both application/json and text/event-stream");
  }
  if (!/^application\/json\b/i.test(request.headers["content-type"] ?? "")) {
    return transportError(reply, 415, "Unsupported Media Type: Content-Type must be application/json");
  }
  const checked = checkMessage(request.body);
  if (!checked.ok) {
    if (!checked.response) return void reply.code(202).send();
    return void reply.code(checked.status).send(checked.response);
  }
  const message = checked.message;
  if (!isInitializeRequest(message)) {
    const version = request.headers["mcp-protocol-version"];
    if (typeof version === "string" && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return transportError(
        reply,
        400,
        `Bad Request: Unsupported protocol version: ${version.slice(0, 40)} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`,
      );
    }
  }
  const mux = await muxFor(runtime);
  if (!isJSONRPCRequest(message)) {
    mux.notify(message);
    return void reply.code(202).send();
  }
  // At the call bound, refuse before anything runs: 503 with Retry-After, as on /actions.
  if (message.method === "tools/call" && runtime.calls.active >= runtime.calls.max) {
    const busy = rpcError(message.id, ErrorCode.InternalError, "server busy: retry later", "E_BUSY");
    return void reply.code(503).header("retry-after", String(RETRY_AFTER_S)).send(busy);
  }
  const gone = new AbortController();
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) gone.abort();
  });
  // tools/list and tools/call, already checked, go straight to the same handlers the Server uses: the SDK's
  // request machinery (three more schema parses, a result parse) would double the cost of a call.
  const direct = directResult(runtime, message, gone.signal);
  if (direct) return void reply.code(200).send({ jsonrpc: "2.0", id: message.id, result: await direct });
  const response = await mux.request(message, gone.signal);
  if (!response) return; // The client went away; its call was cancelled.
  return void reply.code(200).header("content-type", "application/json").send(response);
}

export async function serveStdio(runtime: Runtime<unknown>): Promise<void> {
  // A reader that went away (EPIPE) or a full disk behind stdout: nothing left to say to anyone; leave quietly.
  process.stdout.on("error", () => process.exit(0));
  const server = createMcpServer(runtime);
  await server.connect(new LineTransport(process.stdin, process.stdout, MAX_STDIO_MESSAGE_BYTES));
}
