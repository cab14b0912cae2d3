/**
 * SIGTERM answers every call in flight: POST /actions and POST /mcp get their result if it comes within
 * SHUTDOWN_GRACE_MS, else a typed answer (503 E_BUSY "shutting down", as JSON-RPC on /mcp) before the
 * connections are cut. Before this, a shutdown dropped them with no answer (only SSE got `end`).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from "fastify";
import { DiagError, errorBody } from "../errors/errors.ts";
import { RPC, rpcError } from "../mcp/rpc.ts";

/** How long calls in flight get to finish once the server is told to stop. */
export const SHUTDOWN_GRACE_MS = 2_000;

/**
 * How long shutdown answers get to be written before the process leaves anyway: a peer that does not read (a
 * full pipe, a stalled socket) would otherwise keep it alive forever. What is not written by then is dropped.
 */
export const SHUTDOWN_FLUSH_MS = 500;

/** What a call still running at the end of the grace period is told, on every surface (E_BUSY, 503). */
export const SHUTDOWN_MESSAGE = "server shutting down; call again (roadnerd restarts it)";

/**
 * A handler's work, unless its call was answered at shutdown meanwhile: then its late result or failure is
 * dropped (undefined), instead of a second send that Fastify logs as FST_ERR_REP_ALREADY_SENT (or "Promise
 * errored, but reply.sent = true").
 */
export async function unlessAnswered<T>(reply: FastifyReply, work: Promise<T>): Promise<T | undefined> {
  try {
    const result = await work;
    return reply.sent ? undefined : result;
  } catch (err) {
    if (reply.sent) return undefined;
    throw err;
  }
}

export interface InFlight {
  /** Wait up to the grace period, then answer whatever is left with the shutdown error. */
  drain(): Promise<void>;
}

function shutdownAnswer(request: FastifyRequest, reply: FastifyReply): void {
  if (reply.sent || reply.raw.headersSent) return;
  const error = new DiagError("E_BUSY", SHUTDOWN_MESSAGE);
  void reply.code(503).header("connection", "close").header("retry-after", "1");
  if (request.url.startsWith("/mcp")) {
    const body = request.body as { id?: unknown } | undefined;
    const id = typeof body?.id === "string" || typeof body?.id === "number" ? body.id : null;
    void reply.send(rpcError(id, RPC.InternalError, error.message, "E_BUSY"));
    return;
  }
  void reply.send(errorBody(error));
}

export function trackInFlight(app: FastifyInstance): InFlight {
  const open = new Map<FastifyReply, { request: FastifyRequest; done: Promise<void> }>();
  const track: preHandlerHookHandler = (request, reply, next) => {
    if (request.method === "POST") {
      const done = new Promise<void>((resolve) => reply.raw.once("close", () => resolve()));
      open.set(reply, { request, done });
      void done.then(() => open.delete(reply));
    }
    next();
  };
  // Only on the routes a POST reaches (the calls), as a route hook: a GET (/healthz, /sse…) does not even pass
  // through it (ADR 0037). Routes added after this see it.
  app.addHook("onRoute", (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.includes("POST")) return;
    const own =
      route.preHandler === undefined ? [] : Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler];
    route.preHandler = [track, ...own];
  });
  return {
    async drain() {
      if (open.size === 0) return;
      const all = Promise.all([...open.values()].map((o) => o.done));
      const grace = new Promise((r) => setTimeout(r, SHUTDOWN_GRACE_MS).unref());
      await Promise.race([all, grace]);
      const left = [...open.entries()];
      for (const [reply, { request }] of left) shutdownAnswer(request, reply);
      // Give the answers a moment to be written before forceCloseConnections cuts them.
      await Promise.race([
        Promise.all(left.map(([, o]) => o.done)),
        new Promise((r) => setTimeout(r, SHUTDOWN_FLUSH_MS).unref()),
      ]);
    },
  };
}
