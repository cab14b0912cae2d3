/**
 * The gateway over Streamable HTTP at /mcp, stateless with JSON responses, served by the kernel's MCP
 * adapter (answerMcpPost: the same protocol rules, guard and one long-lived server as every server's /mcp).
 * Here only the HTTP around it: 127.0.0.1 only, a Host and Origin check against DNS rebinding, the body read
 * with a limit, and GET /healthz for `roadnerd up`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import {
  addOwnPort,
  answerMcpPost,
  baseEnvShape,
  boundConnections,
  callerKey,
  corsHeaders,
  ERROR_STATUS,
  HOP_REFUSAL,
  HTTP_SERVER_BOUNDS,
  hostHeaderCount,
  isAllowedOrigin,
  isToolHop,
  judgePeer,
  type McpAnswer,
  originRefusalHint,
  RPC,
  rpcError,
  transportErrorBody,
  uidTrust,
} from "@roadnerd/conventions/internal";
import { z } from "zod";
import pkg from "../package.json" with { type: "json" };
import { ClientShare } from "./client-share.ts";
import { orchestratorEnv } from "./config.ts";
import { type GatewayOptions, gatewaySource } from "./gateway.ts";
import { GatewayInFlight } from "./gateway-in-flight.ts";
import { answerText } from "./gateway-requests.ts";
import { closeIfNeverRead, closeIfRefused } from "./gateway-unread-body.ts";
import { answerPage } from "./page/page-routes.ts";
import { tokenRefusal } from "./page/page-token.ts";

const MAX_BODY = 1 << 20;

export interface GatewayHttp {
  url: string;
  close(): Promise<void>;
}

/** An answer, and whether its result is the same object every time (tools/list): serialized once then. */
type GatewayAnswer = NonNullable<McpAnswer> & { cacheResult?: boolean };

function send(res: ServerResponse, answer: GatewayAnswer): void {
  // Already answered (a shutdown answer won the race): the late answer is dropped, never a second reply.
  if (res.headersSent) return;
  closeIfRefused(res, answer.status);
  // A tools/call that asked for progress: the kernel's SSE stream of notifications, then the result.
  if (answer.stream) {
    res.writeHead(answer.status, answer.headers);
    answer.stream.pipe(res);
    return;
  }
  const json = answer.body === undefined ? {} : { "content-type": "application/json" };
  res.writeHead(answer.status, { ...json, ...answer.headers });
  // A tools/call or tools/list result the kernel serialized already (ADR 0052) is sent as is.
  const text =
    answer.text ?? (answer.body === undefined ? undefined : answerText(answer.body, answer.cacheResult === true));
  res.end(text);
}

const refused = (message: string, hint?: string) => ({
  status: 403,
  body: { error: { code: "E_FORBIDDEN", message, ...(hint ? { hint } : {}) } },
});

/** 413 E_TOO_LARGE as JSON-RPC, the connection closed after it (closeIfRefused). */
const tooLarge = (): GatewayAnswer => ({
  status: ERROR_STATUS.E_TOO_LARGE,
  body: rpcError(null, RPC.InvalidRequest, `body larger than ${MAX_BODY} bytes`, "E_TOO_LARGE"),
});

/**
 * The body as text, or undefined as soon as it passes the limit: the rest is not read (a client could keep
 * sending for minutes), and the 413 closes the connection (`connection: close`, then the socket is ended).
 */
function readBody(req: IncomingMessage): Promise<string | undefined> {
  // Announced over the limit: nothing of it is read.
  if (Number(req.headers["content-length"]) > MAX_BODY) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    const onData = (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) return void chunks.push(c);
      req.off("data", onData);
      req.pause();
      resolve(undefined);
    };
    req.on("data", onData);
    req.on("end", () => resolve(size > MAX_BODY ? undefined : Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/**
 * Aborts when the caller hangs up before its answer is written: its triage or tool call is cancelled. Already
 * aborted when it hung up before we got here (while its body was read or its client looked up): before, such a
 * call ran on to its own deadline, holding a server's slot for no one (issue 18).
 */
function callerGone(res: ServerResponse): AbortSignal {
  if (res.closed && !res.writableFinished) return AbortSignal.abort();
  const gone = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) gone.abort();
  });
  return gone.signal;
}

/** The excess over a client's share: 503 E_BUSY with Retry-After, as a JSON-RPC error on /mcp. */
function overShare(cap: number, rpcId?: string | number | null, what = "tool calls"): NonNullable<McpAnswer> {
  const message = `this client already has ${cap} ${what} in flight at the gateway: retry later`;
  const hint = "wait for an answer before sending more (ROADNERD_CLIENT_CALLS sets the share)";
  const body =
    rpcId === undefined
      ? { error: { code: "E_BUSY", message, hint } }
      : rpcError(rpcId, RPC.InternalError, message, "E_BUSY");
  return { status: 503, body, headers: { "retry-after": "1" } };
}

/**
 * Holds a slot of the client's share until the answer is done: the client's key, or undefined when its share is
 * used up. A caller that hung up while its client was looked up gets its slot back at once (before, the slot
 * was never released).
 */
async function holdShare(req: IncomingMessage, res: ServerResponse, share: ClientShare): Promise<string | undefined> {
  const key = await callerKey(req.socket);
  const release = share.take(key);
  if (!release) return undefined;
  if (res.closed) release();
  else res.once("close", release);
  return key;
}

const rpcIdOf = (body: unknown): string | number | null => {
  const id = typeof body === "object" && body !== null ? Reflect.get(body, "id") : null;
  return typeof id === "string" || typeof id === "number" ? id : null;
};

const methodOf = (body: unknown) =>
  typeof body === "object" && body !== null ? Reflect.get(body, "method") : undefined;

/** A POST to /mcp: the body read and parsed as JSON (when it says it is JSON), then the kernel's answer. */
async function answerPost(
  req: IncomingMessage,
  res: ServerResponse,
  source: ReturnType<typeof gatewaySource>,
  share: ClientShare,
  inFlight: GatewayInFlight,
  releaseRequest: () => void,
): Promise<GatewayAnswer | undefined> {
  const text = await readBody(req);
  if (text === undefined) {
    res.once("finish", () => req.socket.destroySoon());
    return tooLarge();
  }
  let body: unknown;
  if (/^application\/json\b/i.test(req.headers["content-type"] ?? "")) {
    try {
      body = JSON.parse(text);
    } catch {
      return { status: 400, body: rpcError(null, RPC.ParseError, "Parse error: body is not JSON", "E_INVALID_INPUT") };
    }
  }
  inFlight.setRpcId(res, rpcIdOf(body));
  const method = methodOf(body);
  // A tool call moves from the request share to the call share (it may wait for a server); the rest stay.
  let caller: string | undefined;
  if (method === "tools/call") {
    releaseRequest();
    caller = await holdShare(req, res, share);
    if (caller === undefined) return overShare(share.cap, rpcIdOf(body));
  }
  // Cancelled when the caller hangs up or the shutdown's grace period is over; a stream already under way then
  // ends with E_BUSY (graceOver).
  const signal = AbortSignal.any([callerGone(res), inFlight.graceOver]);
  const answer = await answerMcpPost({ headers: req.headers, body }, source, signal, inFlight.graceOver, caller);
  return answer && { ...answer, cacheResult: method === "tools/list" };
}

/** Who may call over loopback without a token: the servers' rule, read with the servers' own config fields. */
const trustEnv = z.object({ ALLOWED_UIDS: baseEnvShape.ALLOWED_UIDS, SUDO_UID: baseEnvShape.SUDO_UID });
const originEnv = z.object({ ALLOWED_ORIGINS: orchestratorEnv.shape.ALLOWED_ORIGINS });
const shareEnv = z.object({
  ROADNERD_CLIENT_CALLS: orchestratorEnv.shape.ROADNERD_CLIENT_CALLS,
  ROADNERD_CLIENT_REQUESTS: orchestratorEnv.shape.ROADNERD_CLIENT_REQUESTS,
});

/** The page's routes that run tools (a call, a triage): they take a slot of the client's share as /mcp does. */
const PAGE_CALL = /^\/api\/(call\/|triage$)/;
/** And its GETs that run one (a watch holds a server's stream slot for up to 300 s; a screenshot's listing). */
const PAGE_GET_CALL = /^\/api\/(watch|screenshot)$/;

/**
 * The servers' bounds (kernel): connection cap, header/request/keep-alive timeouts, refused sockets destroyed;
 * and a share per client of the tool calls in flight (default ROADNERD_CLIENT_CALLS, else 8) and of its other MCP
 * requests (ROADNERD_CLIENT_REQUESTS, else 8).
 */
export interface GatewayBounds {
  maxConnections?: number;
  clientCalls?: number;
  clientRequests?: number;
}

export async function serveGatewayHttp(
  options: GatewayOptions,
  port = 0,
  bounds: GatewayBounds = {},
): Promise<GatewayHttp> {
  const source = gatewaySource(options);
  const trust = uidTrust(trustEnv.parse(process.env));
  // The servers' one Origin rule (ADR 0034): our own origin, or ALLOWED_ORIGINS exactly (the MCP Inspector).
  const origins = {
    bindHost: "127.0.0.1",
    allowedHosts: [],
    allowedOrigins: originEnv.parse(process.env).ALLOWED_ORIGINS,
  };
  const shares = shareEnv.parse(process.env);
  const share = new ClientShare(bounds.clientCalls ?? shares.ROADNERD_CLIENT_CALLS);
  const requests = new ClientShare(bounds.clientRequests ?? shares.ROADNERD_CLIENT_REQUESTS);
  const inFlight = new GatewayInFlight();
  let allowedHosts: Set<string> = new Set();
  const http = createServer({ ...HTTP_SERVER_BOUNDS, requireHostHeader: false }, (req, res) => {
    // Whatever the path and method: an answer before the body is read closes the connection, and a body
    // announced over the gateway's largest limit is refused before any of it is read (ADR 0055).
    closeIfNeverRead(req, res, (req.url ?? "").split("?")[0] ?? "");
    if (Number(req.headers["content-length"]) > MAX_BODY) return send(res, tooLarge());
    // A RoadNerd tool's own request (a server's probe or browser) runs nothing here either (ADR 0047).
    if (isToolHop(req.headers)) return send(res, refused(HOP_REFUSAL));
    if (hostHeaderCount(req.rawHeaders) > 1) {
      return send(res, {
        status: 400,
        body: { error: { code: "E_INVALID_INPUT", message: "more than one Host header" } },
        headers: { connection: "close" },
      });
    }
    // DNS rebinding: only our own loopback names.
    if (!allowedHosts.has((req.headers.host ?? "").toLowerCase())) return send(res, refused("Host not allowed"));
    // A browser page elsewhere must not drive the gateway: only our own origin, ALLOWED_ORIGINS, or none
    // (non-browser clients).
    const origin = req.headers.origin;
    if (origin !== undefined) {
      if (!isAllowedOrigin(origin, req, origins))
        return send(res, refused("Origin not allowed", originRefusalHint(origin)));
      const preflight = req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
      for (const [name, value] of Object.entries(corsHeaders(origin, preflight))) res.setHeader(name, value);
      // A preflight carries no credentials: answered here, before the token and the local-user rule.
      if (preflight) return send(res, { status: 204 });
    }
    const path = (req.url ?? "").split("?")[0];
    if (path === "/healthz" && req.method === "GET") {
      const servers = options.status ? { servers: options.status() } : {};
      return send(res, { status: 200, body: { ok: true, name: "roadnerd", version: pkg.version, ...servers } });
    }
    const refusal = tokenRefusal(req, options.token);
    if (refusal) return send(res, refusal);
    // Without a token, the servers' rule for local users (ADR 0025): the gateway calls them as itself, so it
    // must not serve another user what they would refuse that user.
    if (options.token) return route(req, res, path);
    judgePeer(req.socket, trust).then(
      (verdict) => {
        if (typeof verdict !== "number") return route(req, res, path);
        send(res, {
          status: 403,
          body: {
            error: {
              code: "E_FORBIDDEN",
              message: `local user ${verdict < 0 ? "(unknown)" : `uid ${verdict}`} may not call this gateway`,
              hint: "run the client as the gateway's user, list the uid in ALLOWED_UIDS, or set ROADNERD_GATEWAY_TOKEN",
            },
          },
        });
      },
      () => send(res, { status: 500, body: { error: { code: "E_INTERNAL", message: "peer check failed" } } }),
    );
  });

  /** The page's: cancelled when its caller hangs up or the grace period is over, and told so on a stream. */
  const pageSignals = (res: ServerResponse) => ({
    signal: AbortSignal.any([callerGone(res), inFlight.graceOver]),
    shutdown: inFlight.graceOver,
  });

  function route(req: IncomingMessage, res: ServerResponse, path: string | undefined): void {
    const runsTool =
      (req.method === "POST" && PAGE_CALL.test(path ?? "")) || (req.method === "GET" && PAGE_GET_CALL.test(path ?? ""));
    // A watch's stream is a call in flight too: the shutdown waits for its last event to be written.
    if (req.method === "POST" || runsTool) inFlight.track(res);
    if (runsTool) {
      holdShare(req, res, share).then(
        (caller) =>
          caller !== undefined
            ? answerPage(req, res, options, { ...pageSignals(res), caller })
            : send(res, overShare(share.cap)),
        () => send(res, { status: 500, body: { error: { code: "E_INTERNAL", message: "client check failed" } } }),
      );
      return;
    }
    // The local page (GET /) and its API (/api/*).
    if (path !== "/mcp" && answerPage(req, res, options, pageSignals(res))) return;
    if (path !== "/mcp") {
      send(res, {
        status: 404,
        body: { error: { code: "E_UNKNOWN_TOOL", message: "only /, /api/*, /mcp and /healthz here" } },
      });
      return;
    }
    if (req.method !== "POST") {
      const body = transportErrorBody("Method not allowed: this server is stateless, use POST");
      send(res, { status: 405, body, headers: { allow: "POST" } });
      return;
    }
    const failed = () => {
      if (!res.headersSent)
        send(res, { status: 500, body: rpcError(null, RPC.InternalError, "internal error", "E_INTERNAL") });
    };
    // A slot of the client's request share from arrival, before its body is read (gateway-requests.ts).
    callerKey(req.socket).then((key) => {
      const release = requests.take(key);
      if (!release) {
        // Its body is not read: the answer closes the connection, as for a body over the limit.
        res.once("finish", () => req.socket.destroySoon());
        return send(res, {
          ...overShare(requests.cap, null, "requests"),
          headers: { "retry-after": "1", connection: "close" },
        });
      }
      if (res.closed) release();
      else res.once("close", release);
      answerPost(req, res, source, share, inFlight, release)
        .then((answer) => answer && send(res, answer))
        .catch(failed);
    }, failed);
  }
  boundConnections(http, bounds.maxConnections, options.token ? undefined : trust, "gateway");
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, "127.0.0.1", () => resolve());
  });
  const address = http.address();
  const bound = typeof address === "object" && address ? address.port : port;
  allowedHosts = new Set([`127.0.0.1:${bound}`, `localhost:${bound}`]);
  // A server this process runs must not be sent at the gateway (sibling ports).
  addOwnPort(bound);
  return {
    url: `http://127.0.0.1:${bound}/mcp`,
    // SIGTERM: no new connection; the calls in flight answered (result or E_BUSY), then every connection cut.
    close: async () => {
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      await inFlight.drain();
      http.closeAllConnections();
      await closed;
    },
  };
}
