/**
 * MCP over Streamable HTTP, stateless with JSON responses, and over stdio. Over HTTP the SDK's own transport
 * would convert every POST to a Fetch Request and back and build a Server for it (2.6× the cost of
 * /actions); instead one Server per runtime is fed through MuxTransport, and the few HTTP rules of the
 * transport (Accept, Content-Type, protocol version, 202 for notifications) are applied here as the SDK
 * applies them. The MCP conformance suite checks the result.
 */

import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { type JSONRPCRequest, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyReply, FastifyRequest } from "fastify";
import { BODY_LIMIT_BYTES } from "../define/limits.ts";
import type { DiagError } from "../errors/errors.ts";
import { callerGone } from "../http/caller-gone.ts";
import type { Runtime } from "../runtime/runtime.ts";
import { callTool, createMcpServer, listTools } from "./adapter.ts";
import { checkMessage } from "./guard.ts";
import { MuxTransport } from "./mux.ts";
import { RPC, rpcError, transportErrorBody } from "./rpc.ts";
import { LineTransport } from "./stdio.ts";

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

function transportError(reply: FastifyReply, status: number, message: string): void {
  void reply.code(status).send(transportErrorBody(message));
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
  if (!checked.isInitialize) {
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
  if (!checked.isRequest) {
    mux.notify(message);
    return void reply.code(202).send();
  }
  const rpcRequest = message as JSONRPCRequest;
  // At the call bound, refuse before anything runs: 503 with Retry-After, as on /actions.
  if (rpcRequest.method === "tools/call") {
    try {
      runtime.calls.check("/mcp");
    } catch (err) {
      const busy = err as DiagError;
      const body = rpcError(rpcRequest.id, RPC.InternalError, "server busy: retry later", busy.code);
      return void reply.code(busy.status).header("retry-after", String(busy.retryAfterS)).send(body);
    }
  }
  const gone = callerGone(reply);
  // tools/list and tools/call, already checked, go straight to the same handlers the Server uses: the SDK's
  // request machinery (three more schema parses, a result parse) would double the cost of a call.
  const direct = directResult(runtime, rpcRequest, gone);
  if (direct) return void reply.code(200).send({ jsonrpc: "2.0", id: rpcRequest.id, result: await direct });
  const response = await mux.request(rpcRequest, gone);
  if (!response) return; // The client went away; its call was cancelled.
  return void reply.code(200).header("content-type", "application/json").send(response);
}

export async function serveStdio(runtime: Runtime<unknown>): Promise<void> {
  // A reader that went away (EPIPE) or a full disk behind stdout: nothing left to say to anyone; leave quietly.
  process.stdout.on("error", () => process.exit(0));
  const server = createMcpServer(runtime);
  await server.connect(new LineTransport(process.stdin, process.stdout, BODY_LIMIT_BYTES));
}
