/**
 * The connection cap shared per local uid (issue 18, A1 and B1; ADR 0045, ADR 0058). A uid the local-user rule
 * refuses held 800 sockets against the cap of 768 and reopened each the moment it was cut. Judging each
 * connection takes one read of the socket tables (peer-uid.ts), 60–900 ms under such churn: whatever a full
 * cap cut to make room came straight back, unjudged, so the cap soon held only unjudged sockets and a newcomer
 * (root's /healthz) had nothing to displace and was cut itself.
 *
 * So a full cap never cuts to make room for a connection it has not judged. Below half the cap nothing is
 * judged: a connection costs one entry in a map, no lookup, no wait. From half on, connections are admitted
 * and judged in batches (one lookup each, all sharing one read of the tables). Past the cap a newcomer is
 * parked: paused, unread, not counted, judged in the next batch. Once judged it is admitted if there is room,
 * or if someone may give way (a refused socket, a connection past its uid's share, then the biggest holder's
 * past half, silent ones first); otherwise it waits, parked, for a slot or its headers timeout. A refused
 * socket gets its 403 and is kept, silenced, until that timeout (cut at once, it would reconnect at once). A
 * uid holding half the cap while another uid is connected keeps its extra connections, but they give way first
 * and its parked ones get only slots no one else waits for. The parked are bounded too (by the cap and the
 * descriptors left): when full, the judged that cannot get in are cut first, else the newcomer, never one still
 * waiting for its verdict.
 */
import { readFileSync } from "node:fs";
import type { Server, Socket } from "node:net";
import { DiagError, errorBody } from "../errors/errors.ts";
import { endAndDestroy } from "./client-errors.ts";
import { judgeConnection, type UidTrust } from "./peer-uid.ts";

/** How long a refused or parked socket is kept at most (the headers timeout, connection-bounds.ts). */
const KEPT_MS = 5_000;
/** How many may wait parked per slot of the cap: an fd and ~3 KB each, paid only while someone floods. */
const PARK_PER_SLOT = 4;
/** Descriptors left for everything but connections: subprocess pipes, outbound probes, files. */
const FD_RESERVE = 128;

/**
 * A kept socket's time, spread over the second half of KEPT_MS: a batch judged together and cut together came
 * back together, hundreds of SYNs in one instant, more than the listen backlog takes.
 */
const keptFor = (): number => KEPT_MS * (0.5 + Math.random() / 2);

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

/**
 * The descriptors every capped listener of this process shares (`roadnerd up` runs eight in one process, and
 * stop 27's attacker ran it out of descriptors through all eight at once): the soft limit (Node raises it to
 * the hard one at start; read once, on first need), less FD_RESERVE, less every connection held or parked.
 */
const descriptors = { limit: undefined as number | undefined, held: 0 };

function descriptorsLeft(): number {
  if (descriptors.limit === undefined) {
    descriptors.limit = Number.POSITIVE_INFINITY;
    try {
      const line = /^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"));
      if (line?.[1]) descriptors.limit = Number(line[1]);
    } catch {
      // Not Linux: each listener's cap alone bounds it.
    }
  }
  return descriptors.limit - FD_RESERVE - descriptors.held;
}

/** A connection's standing: not judged, being judged, refused, or allowed (its uid, if known). */
type Standing = "new" | "judging" | "refused" | { uid: number | undefined };

export function capByUid(server: Server, maxConnections: number, trust: UidTrust, what: string): void {
  const half = Math.ceil(maxConnections / 2);
  /** Every admitted connection, oldest first (a Map keeps insertion order). */
  const open = new Map<Socket, Standing>();
  /** Connections past the cap, paused and uncounted, until judged and let in (or cut), oldest first. */
  const parked = new Map<Socket, Standing>();
  const parkMax = PARK_PER_SLOT * maxConnections;
  /** Parked connections judged and allowed, waiting for a slot or for someone to give way, oldest first. */
  const waiting = new Set<Socket>();
  /** Admitted refused sockets, and admitted ones past their uid's share: the first to give way, oldest first. */
  const spare = new Set<Socket>();
  /** The judged admitted connections of each uid, oldest first. */
  const byUid = new Map<number, Set<Socket>>();
  let batchDue = false;

  const othersHold = (uid: number): boolean => {
    for (const other of byUid.keys()) if (other !== uid) return true;
    return false;
  };
  const pastShare = (uid: number | undefined): boolean =>
    uid !== undefined && (byUid.get(uid)?.size ?? 0) >= half && othersHold(uid);

  /** Books an admitted connection under its standing (and its uid's holding, once judged). */
  const book = (socket: Socket, standing: Standing): void => {
    open.set(socket, standing);
    if (typeof standing !== "object" || standing.uid === undefined) return;
    const held = byUid.get(standing.uid) ?? new Set<Socket>();
    if (held.size >= half && othersHold(standing.uid)) spare.add(socket);
    held.add(socket);
    byUid.set(standing.uid, held);
  };
  const admit = (socket: Socket, standing: Standing): void => {
    parked.delete(socket);
    waiting.delete(socket);
    book(socket, standing);
    socket.resume();
  };
  /**
   * Lets parked connections into free slots: judged ones within their share first, then the unjudged, then
   * those past their share (in as spare: first to give way, but not left to time out and reconnect).
   */
  const fill = (): void => {
    while (open.size < maxConnections && parked.size > 0) {
      let unjudged: [Socket, Standing] | undefined;
      let past: [Socket, Standing] | undefined;
      let next: [Socket, Standing] | undefined;
      for (const entry of parked) {
        const standing = entry[1];
        if (typeof standing === "object") {
          if (!pastShare(standing.uid)) {
            next = entry;
            break;
          }
          past ??= entry;
        } else if (standing !== "refused") unjudged ??= entry;
      }
      next ??= unjudged ?? past;
      if (next === undefined) return;
      admit(next[0], next[1]);
    }
  };
  /** Takes a connection off the books: on close, or at once when it is cut (its close comes a tick later). */
  const forget = (socket: Socket): void => {
    waiting.delete(socket);
    if (parked.delete(socket)) {
      descriptors.held -= 1;
      return;
    }
    const standing = open.get(socket);
    if (!open.delete(socket)) return;
    descriptors.held -= 1;
    spare.delete(socket);
    if (typeof standing === "object" && standing.uid !== undefined) {
      const held = byUid.get(standing.uid);
      held?.delete(socket);
      if (held?.size === 0) byUid.delete(standing.uid);
    }
    fill();
  };
  /**
   * Closed, not reset: `resetAndDestroy()` on a socket the HTTP parser consumes never let go of its descriptor
   * (stop 27's attacker: 31 → 4,695 descriptors held after two floods of `up`, and no exit on SIGTERM).
   */
  const cut = (socket: Socket): void => {
    forget(socket);
    socket.destroy();
  };

  /** Who gives way to a judged parked connection of `uid` at a full cap, if anyone should. */
  const victimFor = (uid: number | undefined): Socket | undefined => {
    for (const socket of spare) if (uid === undefined || !byUid.get(uid)?.has(socket)) return socket;
    let biggest: Set<Socket> | undefined;
    for (const [holder, held] of byUid) if (holder !== uid && held.size > (biggest?.size ?? half)) biggest = held;
    if (biggest === undefined) return undefined;
    for (const socket of biggest) if (socket.bytesRead === 0) return socket;
    return biggest.values().next().value;
  };
  /** Lets waiting parked connections in while someone may give way to them (someone just became spare). */
  const relieve = (): void => {
    for (const socket of waiting) {
      const standing = parked.get(socket);
      if (typeof standing !== "object" || pastShare(standing.uid)) continue;
      const out = victimFor(standing.uid);
      if (out === undefined) return;
      admit(socket, standing);
      cut(out);
    }
  };
  const verdictOfOpen = (socket: Socket, verdict: { allowed: boolean; uid: number | undefined }): void => {
    if (!verdict.allowed) {
      // Relieved of pressure meanwhile: nothing to keep it for.
      if (open.size < half && parked.size === 0) {
        endAndDestroy(socket, forbidden(verdict.uid ?? -1, what));
        return;
      }
      open.set(socket, "refused");
      spare.add(socket);
      // A request already sent gets its 403 from the per-request check (http-app.ts): one answer, not two.
      if (socket.bytesRead === 0) socket.write(forbidden(verdict.uid ?? -1, what));
      socket.pause();
      setTimeout(() => cut(socket), keptFor()).unref();
      relieve();
      return;
    }
    book(socket, { uid: verdict.uid });
    if (spare.has(socket)) relieve();
  };
  const verdictOfParked = (socket: Socket, verdict: { allowed: boolean; uid: number | undefined }): void => {
    if (!verdict.allowed) {
      // Parked sockets are never read, so this is its only answer.
      parked.set(socket, "refused");
      socket.write(forbidden(verdict.uid ?? -1, what));
      return;
    }
    const standing = { uid: verdict.uid };
    parked.set(socket, standing);
    if (open.size < maxConnections) {
      admit(socket, standing);
      return;
    }
    const out = pastShare(verdict.uid) ? undefined : victimFor(verdict.uid);
    if (out === undefined) {
      waiting.add(socket);
      return;
    }
    // In first, then the victim out: its slot must not go to another parked connection.
    admit(socket, standing);
    cut(out);
  };
  const verdictOf = (socket: Socket, verdict: { allowed: boolean; uid: number | undefined }): void => {
    if (socket.destroyed) return;
    if (open.has(socket)) verdictOfOpen(socket, verdict);
    else if (parked.has(socket)) verdictOfParked(socket, verdict);
  };
  /** Judges every connection not judged yet; started in one tick, the lookups share one read of the tables. */
  const judgeBatch = (): void => {
    batchDue = false;
    for (const books of [open, parked]) {
      for (const [socket, standing] of books) {
        if (standing !== "new") continue;
        books.set(socket, "judging");
        judgeConnection(socket, trust).then(
          (verdict) => verdictOf(socket, verdict),
          () => cut(socket),
        );
      }
    }
  };

  /** A parked socket that will not get in (refused, or past its uid's share): the first to go. */
  const parkedSpare = (): Socket | undefined => {
    let out: Socket | undefined;
    for (const [other, standing] of parked) {
      if (standing === "refused") return other;
      if (out === undefined && typeof standing === "object" && pastShare(standing.uid)) out = other;
    }
    return out;
  };
  /**
   * Parks a newcomer past the cap, making room among the parked if it must (never for one awaiting its
   * verdict); false when there is no room: the parked are full, or the process is short of descriptors.
   */
  const park = (socket: Socket): boolean => {
    if (parked.size >= parkMax || descriptorsLeft() <= 0) {
      const out = parkedSpare();
      if (out === undefined) return false;
      cut(out);
    }
    socket.pause();
    parked.set(socket, "new");
    descriptors.held += 1;
    setTimeout(() => {
      if (parked.has(socket)) cut(socket);
    }, keptFor()).unref();
    return true;
  };
  /**
   * Nowhere to park (a low descriptor limit, or the parked full of the unjudged): ADR 0045's rule, someone gives
   * way at once — a refused or past-share socket, the oldest unjudged one that never sent a byte, the biggest
   * holder's past half — else the newcomer goes.
   */
  const victimOfNewcomer = (): Socket | undefined => {
    const first = spare.values().next().value;
    if (first !== undefined) return first;
    for (const [socket, standing] of open)
      if ((standing === "new" || standing === "judging") && socket.bytesRead === 0) return socket;
    return victimFor(undefined);
  };

  server.on("connection", (socket: Socket) => {
    socket.once("close", () => forget(socket));
    if (open.size < maxConnections && descriptorsLeft() > 0) {
      open.set(socket, "new");
      descriptors.held += 1;
    } else if (!park(socket)) {
      const out = victimOfNewcomer();
      if (out === undefined) {
        socket.destroy();
        return;
      }
      // In first, then the victim out: its slot must not go to a parked connection.
      open.set(socket, "new");
      descriptors.held += 1;
      cut(out);
    }
    if ((open.size >= half || parked.size > 0) && !batchDue) {
      batchDue = true;
      setImmediate(judgeBatch);
    }
  });
}
