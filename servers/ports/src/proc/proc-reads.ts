/**
 * This server's reads of /proc, owned by its runtime (ctx.use(procReads)): calls that arrive while a read of
 * the socket tables or a scan of /proc/<pid>/fd runs share it (the kernel's single-flight), and a scan that
 * ended less than SCAN_REUSE_MS ago answers again if it saw every inode asked for. An inode a shared scan did
 * not see (a socket opened after that scan began) gets a scan that began after the call did. Two runtimes
 * share nothing; closing the runtime stops the reads in flight.
 */
import { createSharedCalls, DiagError } from "@roadnerd/conventions";
import { defineResource } from "../kit.ts";
import { type NetTables, readAllTables } from "./net-table.ts";
import { knowsAll, only, SCAN_REUSE_MS, type SocketOwners, scanSocketOwners } from "./socket-owners.ts";

export interface ProcReads {
  /**
   * Every listening socket and TCP connection of this namespace; with `connections: false` the listeners only
   * (`connections` empty: a cheaper read, net-table.ts). The object is shared: do not change it.
   */
  tables(signal: AbortSignal, options?: { connections?: boolean }): Promise<NetTables>;
  /** The pids holding each of `inodes`. */
  owners(inodes: ReadonlySet<number>, signal: AbortSignal): Promise<SocketOwners>;
  close(): Promise<void>;
}

interface Scan {
  startedAt: number;
  owners: SocketOwners;
}

/** Work stopped by close() ends with the kernel's reason (E_BUSY), not a bare AbortError. */
async function orReason<T>(signal: AbortSignal, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw signal.aborted ? signal.reason : err;
  }
}

export function createProcReads(): ProcReads {
  const shared = createSharedCalls();
  let last: { endedAt: number; owners: SocketOwners } | undefined;
  // A caller's deadline is checked once the shared work is done (it takes milliseconds), as before sharing.
  const scan = () =>
    shared.run("fd scan", undefined, 0, async (signal): Promise<Scan> => {
      const startedAt = performance.now();
      const owners = await orReason(signal, scanSocketOwners(signal));
      last = { endedAt: performance.now(), owners };
      return { startedAt, owners };
    });
  return {
    async tables(signal, { connections = true } = {}) {
      const tables = await shared.run(connections ? "tables" : "listeners", undefined, 0, (s) =>
        orReason(s, readAllTables("/proc/net", s, { connections })),
      );
      if (signal.aborted) throw new DiagError("E_TIMEOUT", "reading /proc/net took too long");
      return tables;
    },
    async owners(inodes, signal) {
      const calledAt = performance.now();
      if (last && calledAt - last.endedAt < SCAN_REUSE_MS && knowsAll(last.owners, inodes))
        return only(last.owners, inodes);
      let found = await scan();
      // Joined a scan that began before this call and missed a socket: the next one begins after it (the
      // shared one has ended, so a new flight starts now or has started since).
      if (!knowsAll(found.owners, inodes) && found.startedAt < calledAt) found = await scan();
      if (signal.aborted) throw new DiagError("E_TIMEOUT", "scanning /proc/<pid>/fd took too long");
      return only(found.owners, inodes);
    },
    close: () => shared.close(),
  };
}

export const procReads = defineResource({
  name: "proc reads",
  create: () => createProcReads(),
  close: (reads) => reads.close(),
});
