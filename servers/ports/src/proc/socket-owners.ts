/**
 * Which processes hold which sockets: every /proc/<pid>/fd/<n> that links to socket:[inode]. Socket inodes
 * are global, so holders in other network namespaces are found too. Reading another user's fd directory needs
 * root (or CAP_SYS_PTRACE); those processes are counted as unreadable, so a socket nobody seems to hold can be
 * explained. A scan is shared by the calls that arrive while it runs and reused briefly (proc-reads.ts).
 */
import { readdirSync, readlinkSync } from "node:fs";

/** Let the event loop run (other requests, /healthz) between slices of synchronous /proc reads. */
export const nextTurn = () => new Promise<void>((r) => setImmediate(r));

export interface SocketOwners {
  /** inode → pids holding it, ascending. */
  holders: Map<number, number[]>;
  /** Processes whose fd directory we may not read (another user's, without root). */
  unreadable: number;
}

/** Pids listed in /proc (processes, not threads). */
export function listPids(proc = "/proc"): number[] {
  return readdirSync(proc)
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .sort((a, b) => a - b);
}

/** How many pids to scan between two turns of the event loop: a scan is synchronous and must not starve it. */
export const PIDS_PER_TURN = 16;
/** A full scan this recent answers again when it knows every inode asked for (a new socket forces a new scan). */
export const SCAN_REUSE_MS = 100;

/** Every socket inode of every process; stops (throwing the signal's reason) between slices once `signal` aborts. */
export async function scanSocketOwners(signal: AbortSignal): Promise<SocketOwners> {
  const holders = new Map<number, number[]>();
  let unreadable = 0;
  const pids = listPids();
  for (let i = 0; i < pids.length; i++) {
    if (i > 0 && i % PIDS_PER_TURN === 0) {
      await nextTurn();
      signal.throwIfAborted();
    }
    const pid = pids[i] as number;
    const dir = `/proc/${pid}/fd`;
    let fds: string[];
    try {
      fds = readdirSync(dir);
    } catch (err) {
      // Gone since the listing (ENOENT) is normal; EACCES means we may not look.
      if ((err as NodeJS.ErrnoException).code === "EACCES") unreadable++;
      continue;
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`${dir}/${fd}`);
      } catch {
        continue;
      }
      if (!target.startsWith("socket:[")) continue;
      const inode = Number(target.slice(8, -1));
      const list = holders.get(inode);
      if (!list) holders.set(inode, [pid]);
      else if (list.at(-1) !== pid) list.push(pid);
    }
  }
  return { holders, unreadable };
}

/** The scan saw every one of `inodes`. */
export const knowsAll = (owners: SocketOwners, inodes: ReadonlySet<number>) =>
  [...inodes].every((i) => owners.holders.has(i));

/** The holders of `inodes` only. */
export function only(owners: SocketOwners, inodes: ReadonlySet<number>): SocketOwners {
  const holders = new Map<number, number[]>();
  for (const i of inodes) {
    const pids = owners.holders.get(i);
    if (pids) holders.set(i, pids);
  }
  return { holders, unreadable: owners.unreadable };
}
