/**
 * Which processes hold which sockets: every /proc/<pid>/fd/<n> that links to socket:[inode]. Socket inodes
 * are global, so holders in other network namespaces are found too. Reading another user's fd directory needs
 * root (or CAP_SYS_PTRACE); those processes are counted as unreadable, so a socket nobody seems to hold can be
 * explained. A full scan reads every process's descriptors; a refresh (ADR 0064) reads only the processes that
 * started since and checks that each known holder still holds its socket, one link each (proc-reads.ts).
 */
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { sameFilesTable } from "@roadnerd/conventions";
import { statFields } from "./process-facts.ts";

/** Let the event loop run (other requests, /healthz) between slices of synchronous /proc reads. */
export const nextTurn = () => new Promise<void>((r) => setImmediate(r));

export interface SocketOwners {
  /** inode → pids holding it, ascending. */
  holders: Map<number, number[]>;
  /** Processes whose fd directory we may not read (another user's, without root). */
  unreadable: number;
  /** The search of other threads' files (findInThreads) stopped at its bound before placing every socket. */
  searchCut?: boolean;
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

/**
 * How many links to read between two turns, within one process too: one user's 19,000 sockets held /healthz
 * for 300 ms at every call (stop 32's review). ~1 ms of readlink.
 */
export const LINKS_PER_TURN = 256;

/**
 * What a scan saw of one process: how many descriptors it had, each socket it holds and one link to it, relative
 * to /proc/<pid> ("fd/5", or "task/<tid>/fd/5" when the leader has exited and its threads hold the files).
 */
interface Seen {
  /** The size of /proc/<pid>/fd: its count of open files (Linux ≥ 6.2; 0 before, where it says nothing). */
  fds: number;
  sockets: Map<number, string>;
  /** A kernel thread (PF_KTHREAD): it never holds a socket, and a refresh does not look at it. */
  kernel: boolean;
}

/**
 * Descriptors (and thread listings) one search of other threads' tables reads at most (findInThreads): ~50–100 ms
 * of readlink on a quiet machine, yielding every LINKS_PER_TURN.
 */
export const THREAD_SEARCH_LINKS = 20_000;

/** Threads of a process whose leader has exited looked at, at most: they share one table of files. */
const TASKS_LOOKED_AT = 64;

/** What a scan saw, per process (a process with no socket is here too, with none). */
export interface FdScan {
  links: Map<number, Seen>;
  /** Processes whose fd directory we may not read. */
  unreadable: Set<number>;
  /** The newest pid of this pid namespace when its processes were listed (newestPid); undefined: unknown. */
  lastPid?: number;
}

const ours = new Map<string, boolean>();
function procIsOurs(proc: string): boolean {
  let known = ours.get(proc);
  if (known === undefined) {
    try {
      known = readlinkSync(`${proc}/self`) === String(process.pid);
    } catch {
      known = false;
    }
    ours.set(proc, known);
  }
  return known;
}

/**
 * The pid this pid namespace gave out last (/proc/loadavg's last field): unchanged, no process or thread has
 * started since, and a refresh need not list /proc again (a readdir of every process, ~0.2 ms on a quiet
 * machine, more with hundreds of processes). It moves with every fork; coming back to the same number takes
 * pid_max forks, and a full scan comes every FULL_SCAN_MS anyway.
 */
export function newestPid(proc = "/proc"): number | undefined {
  // /proc/loadavg counts the reader's pid namespace: it speaks for the listing only when /proc is ours (a host's
  // /proc mounted into a container of its own pid namespace is not).
  if (!procIsOurs(proc)) return undefined;
  try {
    const last = Number(readFileSync(`${proc}/loadavg`, "latin1").trim().split(" ").pop());
    return Number.isSafeInteger(last) && last > 0 ? last : undefined;
  } catch {
    return undefined;
  }
}

/** The count of open files Linux ≥ 6.2 gives as /proc/<pid>/fd's size; undefined when the process is gone. */
function fdCount(pid: number): number | undefined {
  try {
    return statSync(`/proc/${pid}/fd`, { throwIfNoEntry: false })?.size;
  } catch {
    return undefined;
  }
}

/** The socket links of `pids` (every socket inode each holds); between slices it stops once `signal` aborts. */
export async function scanPids(pids: readonly number[], signal: AbortSignal): Promise<FdScan> {
  const links = new Map<number, Seen>();
  const unreadable = new Set<number>();
  for (let i = 0; i < pids.length; i++) {
    if (i > 0 && i % PIDS_PER_TURN === 0) {
      await nextTurn();
      signal.throwIfAborted();
    }
    const pid = pids[i] as number;
    const dir = `/proc/${pid}/fd`;
    const count = fdCount(pid) ?? 0;
    let fds: string[];
    try {
      fds = readdirSync(dir);
    } catch (err) {
      // Gone since the listing (ENOENT) is normal; EACCES means we may not look.
      if ((err as NodeJS.ErrnoException).code === "EACCES") unreadable.add(pid);
      continue;
    }
    const sockets = new Map<number, string>();
    for (let at = 0; at < fds.length; at += LINKS_PER_TURN) {
      if (at > 0) {
        await nextTurn();
        signal.throwIfAborted();
      }
      addSockets(sockets, pid, "fd", fds.slice(at, at + LINKS_PER_TURN));
    }
    const kernel = fds.length === 0 && isKernelThread(pid);
    if (fds.length === 0 && !kernel) addThreadSockets(sockets, pid);
    links.set(pid, { fds: count, sockets, kernel });
  }
  return { links, unreadable };
}

/** Each socket among `fds` of /proc/<pid>/<at>, by one link to it. */
function addSockets(sockets: Map<number, string>, pid: number, at: string, fds: readonly string[]): void {
  for (const fd of fds) {
    const link = `${at}/${fd}`;
    const inode = socketInode(`/proc/${pid}/${link}`);
    if (inode !== undefined && !sockets.has(inode)) sockets.set(inode, link);
  }
}

/**
 * A process whose leader thread has exited (a zombie leader: its fd directory is empty, `ss -p` shows nothing)
 * while other threads run on with the files: its sockets are read through a thread's own fd directory (stop 32's
 * review hid a listener so, and the process was taken for a kernel thread).
 */
function addThreadSockets(sockets: Map<number, string>, pid: number): void {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`).filter((t) => t !== String(pid));
  } catch {
    return;
  }
  for (const tid of tids.slice(0, TASKS_LOOKED_AT)) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/task/${tid}/fd`);
    } catch {
      continue;
    }
    addSockets(sockets, pid, `task/${tid}/fd`, fds);
    // Threads share their files (CLONE_FILES) unless one unshared them: the first with any is the table.
    if (fds.length > 0) return;
  }
}

/**
 * Sockets among `inodes` that a scan placed nowhere, looked for in the fd directories of every process's other
 * threads: a thread that unshared its files (unshare(CLONE_FILES)) holds a table of its own that the process's
 * /proc/<pid>/fd does not show (as `ss -p` does not: stop 32's review hid a listener's owner so). No count or
 * listing tells a shared table from an own one, so each thread's links are read; this runs only when a full
 * scan left an asked-for socket unplaced (proc-reads.ts remembers those for a while, searched or not), yields
 * every LINKS_PER_TURN links, stops at the signal, ends once every inode is placed, and reads at most
 * THREAD_SEARCH_LINKS descriptors in all (processes in pid order: the machine's own before a newcomer's). A
 * socket in flight over SCM_RIGHTS is placed nowhere, and with 1,000 threads of 1,500 files beside it one user
 * made every root call read 1.5 million links and time out (stop 33's review): the search is bounded instead,
 * and such a socket is answered without a holder. Found sockets are added to their process in `scan`, by the
 * thread's link, so refreshes check them as any other. Returns whether it looked everywhere.
 */
export async function findInThreads(
  scan: FdScan,
  inodes: ReadonlySet<number>,
  signal: AbortSignal,
  budget = THREAD_SEARCH_LINKS,
): Promise<boolean> {
  const placed = new Set<number>();
  for (const seen of scan.links.values())
    for (const inode of seen.sockets.keys()) if (inodes.has(inode)) placed.add(inode);
  let read = 0;
  for (const [pid, seen] of [...scan.links].sort(([a], [b]) => a - b)) {
    if (placed.size >= inodes.size) return true;
    if (seen.kernel) continue;
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`).filter((t) => t !== String(pid));
    } catch {
      continue;
    }
    for (const tid of tids) {
      // A listing is work too: a thread counts one, and its descriptors one each.
      if (++read > budget) return false;
      // A thread sharing its leader's files table (almost every thread) holds what the leader's fd directory
      // showed: only one that unshared its table is listed (kcmp; where it cannot tell, the thread is read).
      if (sameFilesTable(pid, Number(tid)) === true) continue;
      let fds: string[];
      try {
        fds = readdirSync(`/proc/${pid}/task/${tid}/fd`);
      } catch {
        continue;
      }
      if (read + fds.length > budget) return false;
      for (const fd of fds) {
        if (++read % LINKS_PER_TURN === 0) {
          await nextTurn();
          signal.throwIfAborted();
        }
        const link = `task/${tid}/fd/${fd}`;
        const inode = socketInode(`/proc/${pid}/${link}`);
        if (inode === undefined || !inodes.has(inode) || seen.sockets.has(inode)) continue;
        seen.sockets.set(inode, link);
        placed.add(inode);
      }
    }
  }
  return true;
}

/** PF_KTHREAD in /proc/<pid>/stat's flags (field 9): "no files and no executable" is also a zombie leader. */
const PF_KTHREAD = 0x00200000;

function isKernelThread(pid: number): boolean {
  try {
    const flags = Number(statFields(readFileSync(`/proc/${pid}/stat`, "latin1"))?.fields[9 - 3]);
    return (flags & PF_KTHREAD) !== 0;
  } catch {
    return false;
  }
}

/** The socket inode a descriptor links to; undefined when it is gone or not a socket. */
function socketInode(link: string): number | undefined {
  let target: string;
  try {
    target = readlinkSync(link);
  } catch {
    return undefined;
  }
  return target.startsWith("socket:[") ? Number(target.slice(8, -1)) : undefined;
}

/** Every socket inode of every process; stops (throwing the signal's reason) between slices once `signal` aborts. */
export async function scanSocketOwners(signal: AbortSignal): Promise<FdScan> {
  // Read before the listing: a process started after it moves the number, and the next refresh lists again.
  const lastPid = newestPid();
  const scan = await scanPids(listPids(), signal);
  return lastPid === undefined ? scan : { ...scan, lastPid };
}

/**
 * `before` brought up to date for `inodes` without reading every process again: processes gone are dropped,
 * processes started since are scanned whole (a fork shares its parent's sockets), a process whose count of open
 * files changed is scanned whole again (a socket handed over by SCM_RIGHTS, as Node's cluster does, is a new
 * file), and each known holder of an asked-for inode is checked by its one link. What it cannot see: a handover
 * that closed as many files as it opened, one on a kernel before 6.2 (no count), a pid reused within the spell:
 * proc-reads.ts bounds them with a full scan every FULL_SCAN_MS.
 */
export async function refreshScan(before: FdScan, inodes: ReadonlySet<number>, signal: AbortSignal): Promise<FdScan> {
  const lastPid = newestPid();
  // No process started since the last listing: the known ones are all there is (a gone one fails its count).
  const now = lastPid !== undefined && lastPid === before.lastPid ? undefined : listPids();
  const alive = now === undefined ? undefined : new Set(now);
  const isAlive = (pid: number) => (alive ? alive.has(pid) : existsSync(`/proc/${pid}`));
  const links = new Map<number, Seen>();
  const again: number[] = [];
  let read = 0;
  for (const [pid, seen] of before.links) {
    if (alive && !alive.has(pid)) continue;
    let same = seen.kernel || fdCount(pid) === seen.fds;
    for (const [inode, link] of seen.sockets) {
      if (!same) break;
      if (!inodes.has(inode)) continue;
      if (++read % LINKS_PER_TURN === 0) {
        await nextTurn();
        signal.throwIfAborted();
      }
      if (socketInode(`/proc/${pid}/${link}`) !== inode) same = false;
    }
    if (same) links.set(pid, seen);
    else again.push(pid);
  }
  const unreadable = new Set([...before.unreadable].filter(isAlive));
  const started = now ? now.filter((p) => !before.links.has(p) && !before.unreadable.has(p)) : [];
  const fresh = await scanPids([...again, ...started], signal);
  for (const [pid, own] of fresh.links) links.set(pid, own);
  for (const pid of fresh.unreadable) unreadable.add(pid);
  const seenUpTo = now ? lastPid : before.lastPid;
  return seenUpTo === undefined ? { links, unreadable } : { links, unreadable, lastPid: seenUpTo };
}

/** The holders of each inode a scan saw, pids ascending. */
export function ownersOf(scan: FdScan, inodes: ReadonlySet<number>): SocketOwners {
  const holders = new Map<number, number[]>();
  // links is in pid order for a full scan; a refresh appends new pids after older ones: sorted below.
  for (const [pid, seen] of scan.links) {
    for (const inode of seen.sockets.keys()) {
      if (!inodes.has(inode)) continue;
      const list = holders.get(inode);
      if (list) list.push(pid);
      else holders.set(inode, [pid]);
    }
  }
  for (const list of holders.values()) list.sort((a, b) => a - b);
  return { holders, unreadable: scan.unreadable.size };
}

/** Every one of `inodes` has a holder in the scan. */
export const knowsAll = (owners: SocketOwners, inodes: ReadonlySet<number>) =>
  [...inodes].every((i) => owners.holders.has(i));
