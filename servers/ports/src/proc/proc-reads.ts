/**
 * This server's reads of /proc, owned by its runtime (ctx.use(procReads)): calls that arrive while a read of
 * the socket tables, a full scan of /proc/<pid>/fd or a refresh for the same sockets runs share it (the kernel's
 * single-flight). After a full scan, a call is answered by a refresh of it (socket-owners.ts, ADR 0064: the
 * processes started since, and one link per known holder) when that finds a holder for every inode asked for
 * and the full scan is less than FULL_SCAN_MS old (or knows it cannot place them); otherwise by a full scan,
 * one that began after the call did. Two runtimes share nothing; closing the runtime stops the reads in flight.
 */
import { createSharedCalls, DiagError } from "@roadnerd/conventions";
import { defineResource } from "../kit.ts";
import { type NetTables, netlinkBoundOnly, netlinkListeners, readAllTables, type TableSocket } from "./net-table.ts";
import {
  type FdScan,
  findInThreads,
  knowsAll,
  ownersOf,
  refreshScan,
  type SocketOwners,
  scanSocketOwners,
  THREAD_SEARCH_LINKS,
} from "./socket-owners.ts";

/**
 * How long a full scan is refreshed rather than made again: the bound on what a refresh cannot see (a socket
 * handed to an existing process, a pid reused), and on the time a full scan's cost is spread over.
 */
export const FULL_SCAN_MS = 10_000;

/** Full scans begin at most this often: between them a refresh answers (see owners). */
export const FULL_SCAN_GAP_MS = 2_000;

/** How long an answer about one port's bound-only sockets is kept (ProcReads.boundOnly). */
export const BOUND_ONLY_MS = 1_000;

export interface ProcReads {
  /**
   * Every listening socket and TCP connection of this namespace; with `connections: false` the listeners only
   * (`connections` empty: a cheaper read, net-table.ts), from the kernel's socket diagnostics when `netlink` and
   * the addon is there (then only `port`'s, if given). The object is shared: do not change it.
   */
  tables(
    signal: AbortSignal,
    options?: { connections?: boolean; netlink?: boolean; port?: number | undefined },
  ): Promise<NetTables>;
  /**
   * TCP sockets bound to `port` without listening (netlinkBoundOnly; [] without the addon or on a kernel before
   * 6.8): asked by who_uses_port when nothing listens there. One question for every port and concurrent caller,
   * its answer kept BOUND_ONLY_MS (the kernel walks its whole bind hash for it).
   */
  boundOnly(port: number, signal: AbortSignal): Promise<TableSocket[]>;
  /** The pids holding each of `inodes`. */
  owners(inodes: ReadonlySet<number>, signal: AbortSignal): Promise<SocketOwners>;
  close(): Promise<void>;
}

interface Scan {
  startedAt: number;
  scan: FdScan;
}

/** Work stopped by close() ends with the kernel's reason (E_BUSY), not a bare AbortError. */
async function orReason<T>(signal: AbortSignal, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw signal.aborted ? signal.reason : err;
  }
}

/** Listeners from netlink; undefined (read /proc/net instead) when it cannot answer, a refusal of ours aside. */
function fromNetlink(port: number | undefined): ReturnType<typeof netlinkListeners> {
  try {
    return netlinkListeners(port);
  } catch (err) {
    if (err instanceof DiagError) throw err;
    return undefined;
  }
}

/** `scanAll`: the full scan (tests count them). */
export function createProcReads(
  scanAll: (signal: AbortSignal) => Promise<FdScan> = scanSocketOwners,
  { fullScanGapMs = FULL_SCAN_GAP_MS, threadSearchLinks = THREAD_SEARCH_LINKS } = {},
): ProcReads {
  const shared = createSharedCalls();
  /**
   * The last full scan (when it began) brought up to date by the refreshes since, and the inodes it could not
   * place (a socket in flight over SCM_RIGHTS, one of a thread with a files table of its own): asked about again
   * within FULL_SCAN_MS, they are answered without holders instead of making a full scan each time (stop 31's
   * review: 1.8–2.3 s a call with 200 processes of 1,000 descriptors each).
   */
  let last: { fullAt: number; scan: FdScan; unplaced: Set<number> } | undefined;
  /** Unplaced sockets the last thread searches stopped at their bound before reaching (said in the answer). */
  let cutShort = new Set<number>();
  const withCut = (owners: SocketOwners, inodes: ReadonlySet<number>): SocketOwners =>
    [...inodes].some((i) => cutShort.has(i) && !owners.holders.has(i)) ? { ...owners, searchCut: true } : owners;
  const placedOrKnownUnplaced = (owners: SocketOwners, inodes: ReadonlySet<number>, unplaced: Set<number>) =>
    [...inodes].every((i) => owners.holders.has(i) || unplaced.has(i));
  // A caller's deadline is checked once the shared work is done (it takes milliseconds), as before sharing.
  const fullScan = () =>
    shared.run("fd scan", undefined, 0, async (signal): Promise<Scan> => {
      const startedAt = performance.now();
      const scan = await orReason(signal, scanAll(signal));
      last = { fullAt: startedAt, scan, unplaced: new Set() };
      cutShort = new Set();
      return { startedAt, scan };
    });
  return {
    async tables(signal, { connections = true, netlink = false, port } = {}) {
      // Synchronous and ~0.1 ms: nothing to share. (/proc's listeners are the whole table's, filtered by callers.)
      // One port's listeners too when its connections are counted from /proc (who_uses_port): the kernel's
      // filtered answer cannot miss one at a resumed read's boundary, as a walk of the tables can (security.md).
      // Its connections stay /proc's, read once for every concurrent caller: a netlink question about
      // connections walks the whole connection hash synchronously (2.7 ms a family with 262,144 buckets), and
      // per call it took the ports server under load from ~1,100 to ~230 req/s (stop 32, tried and undone).
      const listening = netlink && (!connections || port !== undefined) ? fromNetlink(port) : undefined;
      if (listening && !connections) return { listening, connections: [], source: "netlink" };
      const tables = await shared.run(connections ? "tables" : "listeners", undefined, 0, (s) =>
        orReason(s, readAllTables("/proc/net", s, { connections })),
      );
      if (signal.aborted) throw new DiagError("E_TIMEOUT", "reading /proc/net took too long");
      return listening ? { ...tables, listening, source: "netlink" } : tables;
    },
    async owners(inodes, signal) {
      const calledAt = performance.now();
      const base = last;
      if (base && calledAt - base.fullAt < FULL_SCAN_MS) {
        // Calls asking about the same sockets (listening_sockets under load) share one refresh.
        const key = `fd refresh ${[...inodes].sort((a, b) => a - b).join(",")}`;
        const scan = await shared.run(key, undefined, 0, (s) => orReason(s, refreshScan(base.scan, inodes, s)));
        if (signal.aborted) throw new DiagError("E_TIMEOUT", "scanning /proc/<pid>/fd took too long");
        const owners = withCut(ownersOf(scan, inodes), inodes);
        // A full scan began less than FULL_SCAN_GAP_MS ago: what the refresh (new processes, changed counts)
        // cannot place is answered without a holder, not scanned again (stop 33's second review: a new socket
        // in flight every 0.1 s made every root listening_sockets a full scan of 150,000 links, 1.6 s).
        const recent = calledAt - base.fullAt < fullScanGapMs;
        if (recent) for (const i of inodes) if (!owners.holders.has(i)) base.unplaced.add(i);
        if (recent || placedOrKnownUnplaced(owners, inodes, base.unplaced)) {
          // Kept only if no full scan replaced it meanwhile.
          if (last === base) last = { ...base, scan };
          return owners;
        }
      }
      let found = await fullScan();
      // Joined a scan that began before this call and missed a socket: the next one begins after it (the
      // shared one has ended, so a new flight starts now or has started since).
      if (!knowsAll(ownersOf(found.scan, inodes), inodes) && found.startedAt < calledAt) found = await fullScan();
      if (signal.aborted) throw new DiagError("E_TIMEOUT", "scanning /proc/<pid>/fd took too long");
      // Still unplaced: a thread with a files table of its own may hold it (costly, so only now; one search for
      // every concurrent caller asking about the same sockets).
      // What is still unplaced afterwards is remembered however the search ended (bounded, or cut by the
      // deadline): the next calls within FULL_SCAN_MS answer it without a holder instead of searching again.
      const remember = () => {
        if (last?.scan !== found.scan) return;
        const owners = ownersOf(found.scan, inodes);
        for (const i of inodes) if (!owners.holders.has(i)) last.unplaced.add(i);
      };
      if (!knowsAll(ownersOf(found.scan, inodes), inodes)) {
        const key = `thread search ${[...inodes].sort((a, b) => a - b).join(",")}`;
        const scan = found.scan;
        try {
          const whole = await shared.run(key, signal, 0, (s) =>
            orReason(s, findInThreads(scan, inodes, s, threadSearchLinks)),
          );
          if (!whole) {
            const placed = ownersOf(found.scan, inodes).holders;
            for (const i of inodes) if (!placed.has(i)) cutShort.add(i);
          }
        } finally {
          remember();
        }
        if (signal.aborted) throw new DiagError("E_TIMEOUT", "scanning /proc/<pid>/task/<tid>/fd took too long");
      }
      remember();
      return withCut(ownersOf(found.scan, inodes), inodes);
    },
    async boundOnly(port, signal) {
      // Every port's at once: the walk is the same with a filter, and callers asking about many ports then cost
      // one walk a BOUND_ONLY_MS, not one a port (stop 33's second review: 8 callers on distinct free ports took
      // root's /healthz p99 to 67–143 ms).
      const all = await shared.run("bound only", signal, BOUND_ONLY_MS, async () => {
        try {
          return netlinkBoundOnly() ?? [];
        } catch (err) {
          if (err instanceof DiagError) throw err;
          return [];
        }
      });
      return all.filter((s) => s.port === port);
    },
    close: () => shared.close(),
  };
}

export const procReads = defineResource({
  name: "proc reads",
  create: () => createProcReads(),
  close: (reads) => reads.close(),
});
