/** buildApp: the Fastify app of one server, every route reading the same runtime. Only main.ts listens. */
import fastifySse from "@fastify/sse";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from "fastify";
import type { BaseConfig } from "../define/config.ts";
import { BODY_LIMIT_BYTES } from "../define/limits.ts";
import type { ServerDef } from "../define/server-def.ts";
import { DiagError, toDiagError } from "../errors/errors.ts";
import type { Logger } from "../runtime/logger.ts";
import { maskUrl } from "../runtime/mask.ts";
import { createRuntime, type Runtime, type RuntimeOptions } from "../runtime/runtime.ts";
import { clientErrorHandler } from "./client-errors.ts";
import {
  CONNECTIONS_CHECK_MS,
  capConnections,
  DEFAULT_MAX_CONNECTIONS,
  HEADERS_TIMEOUT_MS,
  KEEP_ALIVE_MS,
  REQUEST_TIMEOUT_MS,
} from "./connection-bounds.ts";
import { registerCors } from "./cors.ts";
import { registerErrorReplies } from "./error-replies.ts";
import { checkRequest, type GuardOptions, hasValidToken } from "./guards.ts";
import { trackInFlight } from "./in-flight.ts";
import { registerJsonBody } from "./json-body.ts";
import { judgePeer, type UidTrust, uidTrust } from "./peer-uid.ts";
import { registerActions } from "./routes/actions.ts";
import { registerMcpHttp } from "./routes/mcp-http.ts";
import { registerMeta } from "./routes/meta.ts";
import { registerMetrics } from "./routes/metrics.ts";
import { registerProbe } from "./routes/probe.ts";
import { END_FLUSH_MS, registerSse, type SseTracker } from "./routes/sse.ts";
import { serverTls } from "./tls.ts";

/** Fastify's own info lines ("Server listening at …") would precede ours; it gets warn and above only. */
function fastifyLogger(log: Logger): FastifyBaseLogger {
  const level = log.levelVal > (log.levels.values.warn ?? 40) ? log.level : "warn";
  const logger = log.child({}, { level }) as FastifyBaseLogger;
  // No per-request child logger (a pino child with redaction on every request, ADR 0033): with request logging
  // off, its request id would label only the rare E_INTERNAL line, which carries the error itself. A logger whose
  // child is itself lets Fastify's default factory skip the child and the check it runs on a custom factory's
  // result, on every request. (Fastify's own log lines name no request either way.)
  logger.child = () => logger;
  return logger;
}

/**
 * Every failed authentication is logged, with the address, method and path (secrets in the query masked), but
 * not one line each in a flood: the first of each second, with how many more the previous second had.
 */
function authFailureLog(log: Logger): (request: FastifyRequest) => void {
  let second = 0;
  let suppressed = 0;
  return (request) => {
    const now = Math.floor(Date.now() / 1000);
    if (now === second) {
      suppressed += 1;
      return;
    }
    const url = maskUrl(`http://x${request.url.slice(0, 200)}`).replace(/^http:\/\/x/, "");
    log.warn({ ip: request.ip, method: request.method, url, more_in_last_second: suppressed }, "authentication failed");
    second = now;
    suppressed = 0;
  };
}

/** /healthz, with or without a trailing slash or a query: the route the local-user rule leaves open. */
function isHealthz(url: string): boolean {
  // The common case without allocating: exactly "/healthz".
  if (url === "/healthz") return true;
  if (!url.startsWith("/healthz")) return false;
  return url.split("?")[0]?.replace(/\/$/, "") === "/healthz";
}

/** A local user other than ours, root or ALLOWED_UIDS gets root's view only with the token. */
async function checkLocalUser(
  request: FastifyRequest,
  trust: UidTrust,
  guard: GuardOptions,
  allowedPeers: WeakSet<object>,
): Promise<void> {
  if (guard.authToken && hasValidToken(request.headers.authorization, guard.authToken)) return;
  const socket = request.raw.socket;
  const verdict = await judgePeer(socket, trust);
  if (typeof verdict !== "number") {
    allowedPeers.add(socket);
    return;
  }
  throw new DiagError(
    "E_FORBIDDEN",
    `local user ${verdict < 0 ? "(unknown)" : `uid ${verdict}`} may not call this server`,
    {
      hint: "run the client as the server's user, list the uid in ALLOWED_UIDS, or send the AUTH_TOKEN",
    },
  );
}

export async function buildHttpApp(runtime: Runtime<unknown>): Promise<FastifyInstance> {
  const config: BaseConfig = runtime.config;
  const guard: GuardOptions = {
    bindHost: config.HOST,
    allowedHosts: config.ALLOWED_HOSTS,
    allowedOrigins: config.ALLOWED_ORIGINS,
    authToken: config.AUTH_TOKEN,
  };
  const serverOptions = {
    headersTimeout: HEADERS_TIMEOUT_MS,
    connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
    // A request without Host reaches our guard and gets a typed 400, instead of Node's empty one.
    requireHostHeader: false,
  };
  // node:https takes node:http's options too: the same bounds whether the server speaks TLS or not.
  const tls = serverTls(config);
  const app: FastifyInstance = Fastify({
    loggerInstance: fastifyLogger(runtime.log),
    bodyLimit: BODY_LIMIT_BYTES,
    requestTimeout: REQUEST_TIMEOUT_MS,
    // An idle keep-alive connection holds a slot of DEFAULT_MAX_CONNECTIONS: let it go soon (Fastify's default is 72 s).
    keepAliveTimeout: KEEP_ALIVE_MS,
    ...(tls ? { https: { ...serverOptions, ...tls } } : { http: serverOptions }),
    clientErrorHandler,
    // runTool logs each call with its tool, run_id and duration; per-request lines would only repeat it.
    logController: new LogController({ disableRequestLogging: true }),
    // On close, cut what is left once the streams have said `end` (see preClose below).
    forceCloseConnections: true,
  });
  const trust = uidTrust(config);
  // Connections whose peer was judged allowed: the uid at the other end of a connection never changes, so its
  // next requests skip the lookup's promise chain (issue 17: microseconds on every call of a keep-alive client).
  const allowedPeers = new WeakSet<object>();
  // With a token, a refused uid may still call with it: no uid gives way for being refused then (ADR 0045).
  capConnections(app.server, DEFAULT_MAX_CONNECTIONS, config.AUTH_TOKEN ? undefined : trust);
  await app.register(fastifySse, { heartbeatInterval: 0 });
  registerJsonBody(app);
  const authFailures = authFailureLog(runtime.log);
  const refuse = (request: FastifyRequest, reply: FastifyReply, err: unknown): Error => {
    if (err instanceof DiagError && err.code === "E_UNAUTHORIZED") authFailures(request);
    // A refused caller does not keep its connection (a table of idle refused connections locks everyone out).
    void reply.header("connection", "close");
    return err instanceof Error ? err : toDiagError(err);
  };
  // Callback-style, not async (ADR 0033): the synchronous guards run on every request without a promise, and
  // only routes the local-user rule covers (all but /healthz) wait for the peer's uid. Every guard still runs.
  app.addHook("onRequest", (request, reply, done) => {
    try {
      checkRequest(request, guard);
    } catch (err) {
      return done(refuse(request, reply, err));
    }
    if (isHealthz(request.url) || allowedPeers.has(request.raw.socket)) return done();
    checkLocalUser(request, trust, guard, allowedPeers).then(
      () => done(),
      (err: unknown) => done(refuse(request, reply, err)),
    );
  });
  // Before CORS: the plugin's preflight route must answer refusals with our error body too.
  registerErrorReplies(app, BODY_LIMIT_BYTES);
  registerCors(app, guard);
  const tracker: SseTracker = { open: new Set() };
  const inFlight = trackInFlight(app);
  // SIGTERM (app.close): every open stream is told to end and gets a moment to send `end` before the cut.
  app.addHook("preClose", async () => {
    runtime.shutdown();
    const ended = Promise.all([...tracker.open]);
    await Promise.all([
      Promise.race([ended, new Promise((r) => setTimeout(r, END_FLUSH_MS + 500).unref())]),
      // Calls in flight: their result within the grace period, else a typed 503 before the cut.
      inFlight.drain(),
    ]);
  });
  // Then the server's resources (a warm browser, reads in flight) close with it.
  app.addHook("onClose", async () => {
    await runtime.close();
  });
  registerMeta(app, runtime);
  registerMetrics(app, runtime);
  await registerProbe(app, runtime);
  registerActions(app, runtime);
  registerSse(app, runtime, tracker);
  registerMcpHttp(app, runtime);
  return app;
}

/** A server's HTTP app from its definition: the runtime (config from `env`, default process.env) and the routes. */
export async function buildApp<C extends BaseConfig>(
  def: ServerDef<C>,
  options: RuntimeOptions = {},
): Promise<FastifyInstance> {
  return buildHttpApp(createRuntime(def, options));
}
