/**
 * What one connection may cost, the same for every server and the gateway: headers complete within 5 s, the
 * whole request within 10 s, an idle keep-alive connection closed after 5 s, at most DEFAULT_MAX_CONNECTIONS open
 * (capConnections: who gives way past it), and a refused request's socket destroyed, not only ended
 * (client-errors.ts). Whatever the peer does, a stalled or idle connection is gone within its timeout, and one
 * local uid cannot keep the others out (ADR 0045).
 */
import type { Server } from "node:net";
import { clientErrorHandler } from "./client-errors.ts";
import type { UidTrust } from "./peer-uid.ts";
import { capByUid } from "./uid-cap.ts";

/** Headers must be complete this soon, and the whole request (body included) this soon. */
export const HEADERS_TIMEOUT_MS = 5_000;
export const REQUEST_TIMEOUT_MS = 10_000;
/** An idle keep-alive connection is closed after this long (Fastify's default is 72 s, Node's 5 s). */
export const KEEP_ALIVE_MS = 5_000;
/** How often Node looks for stalled requests (its default, 30 s, would let them live that much longer). */
export const CONNECTIONS_CHECK_MS = 1_000;

/** Below the usual 1,024 file descriptors, leaving room for subprocess pipes and outbound probes. */
export const DEFAULT_MAX_CONNECTIONS = 768;

/** Options for node:http's createServer (Fastify passes them through as `http`). */
export const HTTP_SERVER_BOUNDS = {
  headersTimeout: HEADERS_TIMEOUT_MS,
  requestTimeout: REQUEST_TIMEOUT_MS,
  keepAliveTimeout: KEEP_ALIVE_MS,
  connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
} as const;

/**
 * The connection cap, for the servers and the gateway alike. `uids`: the local-user rule, given only where it
 * alone decides who may call (loopback, no token in use); then the cap is shared per uid (uid-cap.ts, ADR 0045).
 * Without it, or with ALLOWED_UIDS=*, Node's plain cap: past it, a new connection is closed at once.
 */
export function capConnections(
  server: Server,
  maxConnections = DEFAULT_MAX_CONNECTIONS,
  uids?: UidTrust,
  what = "server",
): void {
  if (uids === undefined || uids.allowed === "*") {
    server.maxConnections = maxConnections;
    return;
  }
  capByUid(server, maxConnections, uids, what);
}

/** The bounds on a plain node:http server (the gateway): the cap (see capConnections) and the client-error handler. */
export function boundConnections(
  server: Server & { keepAliveTimeout: number },
  maxConnections = DEFAULT_MAX_CONNECTIONS,
  uids?: UidTrust,
  what?: string,
): void {
  capConnections(server, maxConnections, uids, what);
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.on("clientError", clientErrorHandler);
}
