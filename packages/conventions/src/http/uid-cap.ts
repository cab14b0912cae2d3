/**
 * The connection cap shared per local uid (issue 18, A1; ADR 0045). A uid the local-user rule refuses held 800
 * idle sockets against the cap of 768 and reopened each the moment it was cut: the cap is per listener and a
 * socket that sends nothing was never judged, so root's /healthz got 1 answer in 12.
 *
 * Below half the cap nothing is judged: a connection costs one entry in a map, no lookup, no wait. From half
 * on, every connection not yet judged is judged in a batch (one lookup each, all sharing one read of the
 * socket tables, peer-uid.ts). A refused uid's socket gets its 403 and is kept, silenced, as the first one cut
 * when room is needed (cut at once, it would reconnect at once and cost a read per arrival), for at most the
 * headers timeout. A uid holding half the cap while another uid is connected keeps its extra connections, but
 * they are the next ones cut. A full cap never refuses the newcomer while someone else can give way: a refused
 * socket, then a connection past its uid's share, then the oldest that never sent a byte and is not judged yet,
 * then the oldest silent (else oldest) connection of the biggest holder past half.
 */
import type { Server, Socket } from "node:net";
import { DiagError, errorBody } from "../errors/errors.ts";
import { endAndDestroy } from "./client-errors.ts";
import { judgeConnection, type UidTrust } from "./peer-uid.ts";

/** How long a refused socket is kept, silenced, at most (the same as the headers timeout, connection-bounds.ts). */
const REFUSED_KEPT_MS = 5_000;

/** A refused uid's answer, written once it is judged, whether or not it has sent a request yet. */
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

/** A connection's standing: not judged, being judged, refused (first cut), or allowed (its uid, if known). */
type Standing = "new" | "judging" | "refused" | { uid: number | undefined };

export function capByUid(server: Server, maxConnections: number, trust: UidTrust, what: string): void {
  const half = Math.ceil(maxConnections / 2);
  /** Every open connection, oldest first (a Map keeps insertion order). */
  const open = new Map<Socket, Standing>();
  /** Refused sockets, and allowed ones past their uid's share: the first to give way, oldest first. */
  const spare = new Set<Socket>();
  /** The judged connections of each uid, oldest first. */
  const byUid = new Map<number, Set<Socket>>();
  let batchDue = false;

  /** Takes a connection off the books: on close, or at once when it is cut (its close comes a tick later). */
  const forget = (socket: Socket): void => {
    const standing = open.get(socket);
    open.delete(socket);
    spare.delete(socket);
    if (typeof standing !== "object" || standing.uid === undefined) return;
    const held = byUid.get(standing.uid);
    held?.delete(socket);
    if (held?.size === 0) byUid.delete(standing.uid);
  };
  const cut = (socket: Socket): void => {
    forget(socket);
    socket.destroy();
  };

  const othersHold = (uid: number): boolean => {
    for (const other of byUid.keys()) if (other !== uid) return true;
    return false;
  };
  /** Who gives way to a newcomer at a full cap, if anyone should. */
  const victim = (newcomer: Socket): Socket | undefined => {
    const first = spare.values().next().value;
    if (first !== undefined) return first;
    for (const [socket, standing] of open) {
      if (socket === newcomer) break;
      if ((standing === "new" || standing === "judging") && socket.bytesRead === 0) return socket;
    }
    let biggest: Set<Socket> | undefined;
    for (const held of byUid.values()) if (held.size > (biggest?.size ?? half)) biggest = held;
    if (biggest === undefined) return undefined;
    for (const socket of biggest) if (socket.bytesRead === 0) return socket;
    return biggest.values().next().value;
  };
  const verdictOf = (socket: Socket, verdict: { allowed: boolean; uid: number | undefined }): void => {
    if (socket.destroyed || !open.has(socket)) return;
    if (!verdict.allowed) {
      // Relieved of pressure meanwhile: nothing to keep it for.
      if (open.size < half) {
        endAndDestroy(socket, forbidden(verdict.uid ?? -1, what));
        return;
      }
      open.set(socket, "refused");
      spare.add(socket);
      // A request already sent gets its 403 from the per-request check (http-app.ts): one answer, not two.
      if (socket.bytesRead === 0) socket.write(forbidden(verdict.uid ?? -1, what));
      socket.pause();
      setTimeout(() => cut(socket), REFUSED_KEPT_MS).unref();
      return;
    }
    open.set(socket, { uid: verdict.uid });
    if (verdict.uid === undefined) return;
    const held = byUid.get(verdict.uid) ?? new Set<Socket>();
    if (held.size >= half && othersHold(verdict.uid)) spare.add(socket);
    held.add(socket);
    byUid.set(verdict.uid, held);
  };
  /** Judges every connection not judged yet; started in one tick, the lookups share one read of the tables. */
  const judgeBatch = (): void => {
    batchDue = false;
    for (const [socket, standing] of open) {
      if (standing !== "new") continue;
      open.set(socket, "judging");
      judgeConnection(socket, trust).then(
        (verdict) => verdictOf(socket, verdict),
        () => cut(socket),
      );
    }
  };

  server.on("connection", (socket: Socket) => {
    open.set(socket, "new");
    socket.once("close", () => forget(socket));
    if (open.size > maxConnections) {
      const out = victim(socket);
      cut(out ?? socket);
    }
    if (open.size >= half && !batchDue) {
      batchDue = true;
      setImmediate(judgeBatch);
    }
  });
}
