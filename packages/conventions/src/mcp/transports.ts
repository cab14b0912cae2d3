/**
 * MCP over Streamable HTTP, stateless with JSON responses, and over stdio. Over HTTP the SDK's own transport
 * would convert every POST to a Fetch Request and back and build a Server for it (2.6× the cost of
 * /actions); instead one Server per tool source (a server's runtime, or the gateway) is fed through MuxTransport, and the few HTTP rules of the
 * transport (Accept, Content-Type, protocol version, 202 for notifications) are applied here as the SDK
 * applies them. The MCP conformance suite checks the result.
 */

import type { IncomingHttpHeaders } from "node:http";
import {
  type JSONRPCMessage,
  type JSONRPCRequest,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import type { FastifyReply, FastifyRequest } from "fastify";
import { BODY_LIMIT_BYTES } from "../define/limits.ts";
import { toDiagError } from "../errors/errors.ts";
import { callerGone } from "../http/caller-gone.ts";
import { SHUTDOWN_GRACE_MS } from "../http/in-flight.ts";
import type { Runtime } from "../runtime/runtime.ts";
import {
  type CallParams,
  callTool,
  createSourceServer,
  listTools,
  type McpToolSource,
  runtimeSource,
} from "./adapter.ts";
import { checkMessage } from "./guard.ts";
import { MuxTransport } from "./mux.ts";
import { RPC, rpcError, transportErrorBody } from "./rpc.ts";
import { LineTransport } from "./stdio.ts";

const muxes = new WeakMap<McpToolSource, Promise<MuxTransport>>();

/** One long-lived Server per source, connected once (concurrent first requests share the connection). */
function muxFor(source: McpToolSource): Promise<MuxTransport> {
  let mux = muxes.get(source);
  if (!mux) {
    const transport = new MuxTransport();
    mux = createSourceServer(source)
      .connect(transport)
      .then(() => transport);
    muxes.set(source, mux);
  }
  return mux;
}

/** The answer to a plain tools/list or tools/call without the SDK's dispatch, or undefined for anything else. */
function directResult(source: McpToolSource, message: JSONRPCRequest, signal: AbortSignal) {
  if (message.method === "tools/list" && message.params?.cursor === undefined)
    return Promise.resolve(listTools(source));
  if (message.method !== "tools/call") return undefined;
  // checkMessage has checked a tools/call's params against the SDK's schema.
  return callTool(source, message.params as CallParams, signal);
}

/** A POST to /mcp as any HTTP host hands it over: its headers and its body, already parsed as JSON. */
export interface McpPost {
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** What to answer: a status, a JSON body (none for 202) and extra headers; undefined when the caller went away. */
export type McpAnswer = { status: number; body?: unknown; headers?: Record<string, string> } | undefined;

const transportError = (status: number, message: string): McpAnswer => ({ status, body: transportErrorBody(message) });

/** One stateless Streamable HTTP POST against a source, independent of the HTTP framework that carries it. */
export async function answerMcpPost(post: McpPost, source: McpToolSource, signal: AbortSignal): Promise<McpAnswer> {
  const accept = post.headers.accept ?? "";
  if (!accept.includes("application/json") || !accept.includes("text/event-stream")) {
    return transportError(406, "Not Acceptable: Client must accept both application/json and text/event-stream");
  }
  if (!/^application\/json\b/i.test(post.headers["content-type"] ?? "")) {
    return transportError(415, "Unsupported Media Type: Content-Type must be application/json");
  }
  const checked = checkMessage(post.body);
  if (!checked.ok) return checked.response ? { status: checked.status, body: checked.response } : { status: 202 };
  const message = checked.message;
  if (!checked.isInitialize) {
    const version = post.headers["mcp-protocol-version"];
    if (typeof version === "string" && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return transportError(
        400,
        `Bad Request: Unsupported protocol version: ${version.slice(0, 40)} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`,
      );
    }
  }
  const mux = await muxFor(source);
  if (!checked.isRequest) {
    mux.notify(message);
    return { status: 202 };
  }
  const rpcRequest = message as JSONRPCRequest;
  // At the call bound, refuse before anything runs: 503 with Retry-After, as on /actions.
  if (rpcRequest.method === "tools/call" && source.admit) {
    try {
      source.admit();
    } catch (err) {
      const busy = toDiagError(err);
      const body = rpcError(rpcRequest.id, RPC.InternalError, "server busy: retry later", busy.code);
      return { status: busy.status, body, headers: { "retry-after": String(busy.retryAfterS) } };
    }
  }
  // tools/list and tools/call, already checked, go straight to the same handlers the Server uses: the SDK's
  // request machinery (three more schema parses, a result parse) would double the cost of a call.
  const direct = directResult(source, rpcRequest, signal);
  if (direct) return { status: 200, body: { jsonrpc: "2.0", id: rpcRequest.id, result: await direct } };
  const response: JSONRPCMessage | undefined = await mux.request(rpcRequest, signal);
  // Undefined: the client went away; its call was cancelled.
  return response && { status: 200, body: response, headers: { "content-type": "application/json" } };
}

export async function handleMcpPost(
  request: FastifyRequest,
  reply: FastifyReply,
  runtime: Runtime<unknown>,
): Promise<void> {
  const answer = await answerMcpPost(
    { headers: request.headers, body: request.body },
    runtimeSource(runtime),
    callerGone(reply),
  );
  // Gone, or answered at shutdown while it ran (http/in-flight.ts): no second send.
  if (!answer || reply.sent) return;
  void reply
    .code(answer.status)
    .headers(answer.headers ?? {})
    .send(answer.body);
}

/** MCP on stdio for a source, until the client is done or told to stop. */
export interface StdioSession {
  /** Resolves when the client is done (stdin ended, every request answered). */
  closed: Promise<void>;
  close(): Promise<void>;
  /** SIGTERM: calls in flight get their result within the grace period, else E_BUSY "shutting down". */
  drain(graceMs?: number): Promise<void>;
}

export async function serveStdioSource(
  source: McpToolSource,
  input: NodeJS.ReadableStream = process.stdin,
  output: NodeJS.WritableStream = process.stdout,
): Promise<StdioSession> {
  const server = createSourceServer(source);
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  const transport = new LineTransport(input, output, BODY_LIMIT_BYTES);
  await server.connect(transport);
  return { closed, close: () => server.close(), drain: (graceMs = SHUTDOWN_GRACE_MS) => transport.drain(graceMs) };
}

export async function serveStdio(runtime: Runtime<unknown>): Promise<StdioSession> {
  // A reader that went away (EPIPE) or a full disk behind stdout: nothing left to say to anyone; leave quietly.
  process.stdout.on("error", () => process.exit(0));
  return serveStdioSource(runtimeSource(runtime));
}
