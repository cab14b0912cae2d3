/**
 * What one connection may cost, the same for every server and the gateway: headers complete within 5 s, the
 * whole request within 10 s, an idle keep-alive connection closed after 5 s, at most DEFAULT_MAX_CONNECTIONS open
 * (past it, a new connection is closed at once), and a refused request's socket destroyed, not only ended
 * (client-errors.ts). Whatever the peer does, a stalled or idle connection is gone within its timeout.
 */
import type { Server, Socket } from "node:net";
import { DiagError, errorBody } from "../errors/errors.ts";
import { clientErrorHandler, endAndDestroy } from "./client-errors.ts";
import { judgeConnection, type UidTrust } from "./peer-uid.ts";

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
 * The connection cap, for the servers and the gateway alike. `uids`: the local-user rule, given only when it
 * decides who may call (loopback, no token in use); without it, Node's plain cap and no per-connection cost.
 *
 * With it, the cap is shared fairly (issue 18: a uid the rule refuses held 800 idle sockets and reopened each
 * the moment it closed; root's /healthz got 1 answer in 12). Each connection's uid is judged at accept (one
 * shared read of the socket tables, peer-uid.ts): a uid that may not call gets its 403 then and is destroyed (near
 * the cap, kept as the first one cut), not judged only when a request comes. While judgements are pending, a full cap makes room by cutting the oldest unjudged connection rather
 * than refusing the newest, so a flood of reconnects cannot keep a caller out. And no uid holds more than half
 * the cap while another uid is connected: its connections past half are cut, oldest first, when others need
 * room, and a new one past half is refused while others hold connections (a lone caller may still use it all).
 */
/** A refused uid's answer, written at accept whether or not it has sent a request yet; then the socket is gone. */
function forbidden(uid: number, what: string): string {
  const who = uid < 0 ? "(unknown)" : `uid ${uid}`;
  const body = JSON.stringify(
    errorBody(
      new DiagError("E_FORBIDDEN", `local user ${who} may not call this ${what}`, {
        hint: "run the client as the server's user, list the uid in ALLOWED_UIDS, or use the token",
      }),
    ),
  );
  return (
    "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json; charset=utf-8\r\n" +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

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
  const trust = uids;
  const half = Math.ceil(maxConnections / 2);
  /** Connections not judged yet, oldest first; and the judged ones by uid, oldest first. */
  const pending = new Set<Socket>();
  /** Refused connections kept, under pressure, as the first to cut when room is needed (see below). */
  const refused = new Set<Socket>();
  const byUid = new Map<number, Set<Socket>>();
  let open = 0;
  /** Whether a uid other than `uid` holds a judged connection (the map has one entry per connected uid). */
  const othersHold = (uid: number): boolean => {
    for (const other of byUid.keys()) if (other !== uid) return true;
    return false;
  };
  const hog = (): Socket | undefined => {
    for (const held of byUid.values()) if (held.size > half) return held.values().next().value;
    return undefined;
  };
  server.on("connection", (socket: Socket) => {
    open += 1;
    let uid: number | undefined;
    socket.once("close", () => {
      open -= 1;
      pending.delete(socket);
      refused.delete(socket);
      if (uid === undefined) return;
      const held = byUid.get(uid);
      held?.delete(socket);
      if (held?.size === 0) byUid.delete(uid);
    });
    if (open > maxConnections) {
      const victim = refused.values().next().value ?? pending.values().next().value ?? hog();
      if (victim === undefined) {
        socket.destroy();
        return;
      }
      pending.delete(victim);
      refused.delete(victim);
      victim.destroy();
    }
    pending.add(socket);
    judgeConnection(socket, trust).then(
      (verdict) => {
        pending.delete(socket);
        if (socket.destroyed) return;
        if (!verdict.allowed) {
          // Near the cap, a refused socket stays (its 403 written) as the first one cut for a newcomer: destroyed
          // at once, it reconnects at once, and every newcomer would cut the oldest unjudged connection, a
          // caller's included, before its verdict lands (2,000 reconnecting sockets: root 0 of 15). It holds a
          // slot no longer than the headers timeout; below half the cap it is destroyed at once.
          if (open < half) return endAndDestroy(socket, forbidden(verdict.uid ?? -1, what));
          socket.write(forbidden(verdict.uid ?? -1, what));
          refused.add(socket);
          return;
        }
        if (verdict.uid === undefined) return;
        const held = byUid.get(verdict.uid) ?? new Set<Socket>();
        // Past half while others are connected: refused, so the rest of the cap stays theirs.
        if (held.size >= half && othersHold(verdict.uid)) return void socket.destroy();
        uid = verdict.uid;
        held.add(socket);
        byUid.set(uid, held);
      },
      () => {
        pending.delete(socket);
        socket.destroy();
      },
    );
  });
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
