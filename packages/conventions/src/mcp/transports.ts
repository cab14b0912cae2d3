/**
 * MCP over Streamable HTTP, stateless with JSON responses, and over stdio. Over HTTP the SDK's own transport
 * would convert every POST to a Fetch Request and back and build a Server for it (2.6× the cost of
 * /actions); instead one Server per tool source (a server's runtime, or the gateway) is fed through MuxTransport, and the few HTTP rules of the
 * transport (Accept, Content-Type, protocol version, 202 for notifications) are applied here as the SDK
 * applies them. The MCP conformance suite checks the result.
 */

import { setMaxListeners } from "node:events";
import type { IncomingHttpHeaders } from "node:http";
import { PassThrough, type Readable } from "node:stream";
import {
  type CallToolResult,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type ListToolsResult,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import type { FastifyReply, FastifyRequest } from "fastify";
import { BODY_LIMIT_BYTES } from "../define/limits.ts";
import { toDiagError } from "../errors/errors.ts";
import { callerGone } from "../http/caller-gone.ts";
import { callerKey } from "../http/caller-key.ts";
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
import { progressTokenOf } from "./progress.ts";
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
function directResult(
  source: McpToolSource,
  message: JSONRPCRequest,
  signal: AbortSignal,
  caller?: string,
): Promise<ListToolsResult | CallToolResult> | undefined {
  if (message.method === "tools/list" && message.params?.cursor === undefined)
    return Promise.resolve(listTools(source));
  if (message.method !== "tools/call") return undefined;
  // checkMessage has checked a tools/call's params against the SDK's schema.
  return callTool(source, message.params as CallParams, signal, undefined, caller);
}

/**
 * Results as JSON, once per result object: the tools/list of a source is one object, and callers sharing a
 * tool's execution (runtime/shared-calls.ts) share its structuredContent, whose text content (the model view)
 * is rendered once per result object too (ADR 0037). A result without structuredContent (an isError result) is
 * made per call and serialized per call.
 */
const resultTexts = new WeakMap<object, string>();

function resultText(result: ListToolsResult | CallToolResult): string {
  const key = "tools" in result ? result : result.structuredContent;
  if (key === undefined) return JSON.stringify(result);
  let text = resultTexts.get(key);
  if (text === undefined) {
    text = JSON.stringify(result);
    resultTexts.set(key, text);
  }
  return text;
}

/** A JSON-RPC response's text around a result already serialized: what JSON.stringify of the whole would write. */
const responseText = (id: JSONRPCRequest["id"], result: string) =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}`;

/** A POST to /mcp as any HTTP host hands it over: its headers and its body, already parsed as JSON. */
export interface McpPost {
  headers: IncomingHttpHeaders;
  body: unknown;
}

/**
 * What to answer: a status, a JSON body (none for 202) and extra headers, or instead of the body an SSE `stream`
 * to pipe to the caller (a tools/call that asked for progress); undefined when the caller went away.
 */
export type McpAnswer =
  | {
      status: number;
      body?: unknown;
      /** The body already serialized (a tools/call or tools/list result, once per result object): send it as is. */
      text?: string;
      headers?: Record<string, string>;
      stream?: Readable;
    }
  | undefined;

/**
 * A tools/call with a progressToken, answered as Streamable HTTP allows: an SSE stream on the POST carrying the
 * call's notifications/progress, then its response, then the end (after a first comment line that sends the
 * headers at once). No event ids: there is nothing to resume, so a client does not reconnect. The tool runs as
 * on the JSON path (callTool); only its reports have a channel.
 */
function streamedCall(
  source: McpToolSource,
  request: JSONRPCRequest,
  signal: AbortSignal,
  graceOver?: AbortSignal,
  caller?: string,
): NonNullable<McpAnswer> {
  const stream = new PassThrough();
  // A comment first, so the 200 and its headers leave now, not with the first event: the client knows the call
  // is under way, and a shutdown meets a started answer (this stream ends it) rather than a half-sent one.
  stream.write(": tools/call\n\n");
  const write = (message: unknown) => {
    if (!stream.writableEnded) stream.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  };
  const respond = (message: unknown) => {
    write(message);
    stream.end();
  };
  // A 200 is already out, so a shutdown cannot answer 503: past the grace period the response is the same
  // JSON-RPC error the JSON path gets (E_BUSY), and the stream ends, instead of a cut that leaves the client waiting.
  const onGraceOver = () => respond(rpcError(request.id, RPC.InternalError, SHUTTING_DOWN, "E_BUSY"));
  if (graceOver?.aborted) onGraceOver();
  else graceOver?.addEventListener("abort", onGraceOver, { once: true });
  const progress = (params: unknown) => write({ jsonrpc: "2.0", method: "notifications/progress", params });
  void callTool(source, request.params as CallParams, signal, progress, caller)
    .then(
      (result) => respond({ jsonrpc: "2.0", id: request.id, result }),
      (err: unknown) => respond(rpcError(request.id, RPC.InternalError, toDiagError(err).message, "E_INTERNAL")),
    )
    .finally(() => graceOver?.removeEventListener("abort", onGraceOver));
  const headers = { "content-type": "text/event-stream", "cache-control": "no-cache" };
  return { status: 200, stream, headers };
}

/** What a call cut by a shutdown is told (as on the JSON path, http/in-flight.ts). */
const SHUTTING_DOWN = "server shutting down; call again (roadnerd restarts it)";

const graceSignals = new WeakMap<Runtime<unknown>, AbortSignal>();

/**
 * Aborts SHUTDOWN_GRACE_MS after the runtime starts closing: when streamed answers still running end with E_BUSY.
 * One signal per runtime, with as many listeners as calls in flight (bounded by MAX_CALLS, not by this signal).
 */
function graceOver(runtime: Runtime<unknown>): AbortSignal {
  let signal = graceSignals.get(runtime);
  if (!signal) {
    const over = new AbortController();
    setMaxListeners(0, over.signal);
    const start = () => setTimeout(() => over.abort(), SHUTDOWN_GRACE_MS).unref();
    if (runtime.closing.aborted) start();
    else runtime.closing.addEventListener("abort", start, { once: true });
    signal = over.signal;
    graceSignals.set(runtime, signal);
  }
  return signal;
}

const transportError = (status: number, message: string): McpAnswer => ({ status, body: transportErrorBody(message) });

/**
 * One stateless Streamable HTTP POST against a source, independent of the HTTP framework that carries it.
 * `graceOver`: the host's shutdown grace is over: a streamed answer (it cannot turn into a 503) ends with E_BUSY.
 * `caller`: whose call it is (http/caller-key.ts), handed to the tool's call.
 */
export async function answerMcpPost(
  post: McpPost,
  source: McpToolSource,
  signal: AbortSignal,
  graceOver?: AbortSignal,
  caller?: string,
): Promise<McpAnswer> {
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
  if (!checked.isRequest) {
    (await muxFor(source)).notify(message);
    return { status: 202 };
  }
  const rpcRequest = message as JSONRPCRequest;
  // At the call bound, refuse before anything runs: 503 with Retry-After, as on /actions.
  if (rpcRequest.method === "tools/call" && source.admit) {
    try {
      source.admit(caller);
    } catch (err) {
      const busy = toDiagError(err);
      const body = rpcError(rpcRequest.id, RPC.InternalError, "server busy: retry later", busy.code);
      return { status: busy.status, body, headers: { "retry-after": String(busy.retryAfterS) } };
    }
  }
  if (rpcRequest.method === "tools/call" && progressTokenOf(rpcRequest.params?._meta) !== undefined) {
    return streamedCall(source, rpcRequest, signal, graceOver, caller);
  }
  // tools/list and tools/call, already checked, go straight to the same handlers the Server uses: the SDK's
  // request machinery (three more schema parses, a result parse) would double the cost of a call.
  // Neither waits for the SDK's Server: it is made (once) for the other methods only.
  const direct = directResult(source, rpcRequest, signal, caller);
  if (direct) {
    const result = await direct;
    const body = { jsonrpc: "2.0", id: rpcRequest.id, result };
    return { status: 200, body, text: responseText(rpcRequest.id, resultText(result)) };
  }
  const mux = await muxFor(source);
  const response: JSONRPCMessage | undefined = await mux.request(rpcRequest, signal);
  // Undefined: the client went away; its call was cancelled.
  return response && { status: 200, body: response, headers: { "content-type": "application/json" } };
}

export async function handleMcpPost(
  request: FastifyRequest,
  reply: FastifyReply,
  runtime: Runtime<unknown>,
): Promise<FastifyReply | undefined> {
  const signal = callerGone(reply);
  const caller = await callerKey(request.raw.socket, request.headers);
  const answer = await answerMcpPost(
    { headers: request.headers, body: request.body },
    runtimeSource(runtime),
    signal,
    graceOver(runtime),
    caller,
  );
  // Gone, or answered at shutdown while it ran (http/in-flight.ts): no second send.
  if (!answer || reply.sent) return undefined;
  // The reply itself goes back to the route: Fastify then waits for it (a stream is still being written)
  // instead of ending it with an empty body.
  void reply.code(answer.status);
  if (answer.headers) void reply.headers(answer.headers);
  // Serialized already: sent as is under the type Fastify gives a JSON body.
  if (answer.text !== undefined) return reply.type("application/json; charset=utf-8").send(answer.text);
  return reply.send(answer.stream ?? answer.body);
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
