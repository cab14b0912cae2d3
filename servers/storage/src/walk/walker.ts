/**
 * The directory walk under top_consumers: sizes like `du -x` (allocated blocks × 512, each directory's own
 * blocks included, a hard-linked file counted once, symlinks never followed: lstat only), the biggest entries
 * down to a depth, stopped at a deadline or an abort with what it has.
 *
 * Why synchronous, on the main thread: the walk is one system call per entry, and Node has no fstatat. The
 * main thread has the cheapest lookup: it chdirs into a directory (and checks it is the one listed) and lstats
 * each entry by its one name, as du does, in slices of at most SLICE_MS between which the event loop runs
 * (other requests, the deadline, the abort). Helper threads cannot chdir: through /proc/<pid>/fd/<fd>/<name>
 * each lookup costs about twice the kernel's work, and with the cores shared they lost (ADR 0038).
 *
 * A sync call can only stall on a filesystem whose server stalls: network and FUSE mounts are never entered or
 * even lstat'ed (their mount points come from the mount table before the walk), and a walk never starts on one.
 *
 * Confined by descriptors, not path strings (a local user may rename or swap directories under a walk in
 * /tmp): a directory is entered by its path and used only if the directory the kernel then holds (the cwd, or
 * a descriptor opened without following a symlink) has the device and inode its parent's listing saw; its
 * entries are looked up from there (by one name, or /proc/self/fd/<fd>/<name>, like fstatat), so a component
 * swapped for a symlink above it leads nowhere.
 */
import { closeSync, fstatSync, lstatSync, openSync, readdirSync, type Stats } from "node:fs";
import { setImmediate as yieldToLoop } from "node:timers/promises";
import { DIR_NOFOLLOW, fdPath } from "@roadnerd/conventions";
import { isInside, NEVER_WALKED } from "./scan-path.ts";
import { Tally, type WalkNode, type WalkProgress } from "./tally.ts";

export type { WalkNode, WalkProgress } from "./tally.ts";

export const SLICE_MS = 8;
const NO_THROW = { throwIfNoEntry: false } as const;

export interface WalkResult extends WalkProgress {
  entries: WalkNode[];
  skipped: { unreadable: number; other_fs: number; network_fs: number; vanished: number; too_deep: number };
  truncated: boolean;
  stopped: "done" | "deadline" | "cancelled";
}

export interface WalkOptions {
  /** A real (symlink-free) directory path. */
  root: string;
  /** What `root` must still be when it is opened (scan checked the directory it opened). */
  rootId?: { dev: number; ino: number };
  depth: number;
  n: number;
  oneFilesystem: boolean;
  /** performance.now() at which to stop and answer with what was found. */
  deadline: number;
  signal: AbortSignal;
  /** Mount points never to lstat or enter (network and FUSE mounts). */
  avoid: ReadonlySet<string>;
  onProgress?: (p: WalkProgress) => void;
  progressEveryMs?: number;
}

export interface Frame {
  path: string;
  rel: string;
  depth: number;
  /** Tracked ancestors (depth 1..options.depth) whose size includes this directory's. */
  chain: WalkNode[];
  /** The directory its parent listed: what `path` must open to. */
  dev: number;
  ino: number;
}

/** Longest path the kernel resolves (PATH_MAX with its NUL): deeper entries are counted as too_deep, as before. */
const PATH_MAX = 4096;
/** A UTF-16 unit is at most 3 bytes of UTF-8: only paths that long are measured. */
const tooLong = (path: string) => path.length * 3 >= PATH_MAX && Buffer.byteLength(path) >= PATH_MAX;

const errCode = (err: unknown) => (err as NodeJS.ErrnoException).code;

/** A directory being listed: its names, how far, and how its entries are looked up ("" when it is the cwd). */
interface Listing {
  frame: Frame;
  names: string[];
  i: number;
  /** Set when entered through a descriptor (chdir refused): `/proc/self/fd/<fd>/`. */
  fd?: number;
}

export async function walk(o: WalkOptions): Promise<WalkResult> {
  const rootStat = lstatSync(o.root);
  const rootId = o.rootId ?? { dev: rootStat.dev, ino: rootStat.ino };
  const rootDev = rootStat.dev;
  const t = new Tally(o.n, rootStat);
  // Directories to read, depth first.
  const stack: Frame[] = [{ path: o.root, rel: "", depth: 0, chain: [], ...rootId }];
  let current: Listing | undefined;
  let stopped: WalkResult["stopped"] | undefined;
  const childPath = (frame: Frame, name: string) => (frame.path === "/" ? `/${name}` : `${frame.path}/${name}`);

  /** Count one entry and queue it if it is a directory to enter. */
  function visit(frame: Frame, name: string, path: string, st: Stats): void {
    const isDir = st.isDirectory();
    if (st.dev !== rootDev && (o.oneFilesystem || NEVER_WALKED.some((n) => isInside(path, n)))) {
      t.skipped.other_fs += 1;
      return;
    }
    if (!isDir && st.nlink > 1 && !t.firstLink(`${st.dev}:${st.ino}`)) return;
    const bytes = st.blocks * 512;
    t.add(frame.chain, bytes, st.size, isDir);
    const depth = frame.depth + 1;
    const rel = frame.rel ? `${frame.rel}/${name}` : name;
    if (isDir) {
      let chain = frame.chain;
      if (depth <= o.depth) {
        const node = t.dir(rel);
        node.bytes += bytes;
        node.apparent += st.size;
        chain = [...chain, node];
      }
      stack.push({ path, rel, depth, chain, dev: st.dev, ino: st.ino });
    } else if (depth <= o.depth && st.isFile()) {
      t.file(rel, bytes, st.size);
    }
  }

  /**
   * Into a frame's directory: chdir by its path, then check the cwd is the directory the parent listed (a
   * component swapped for a symlink lands elsewhere and is refused). Where chdir is refused (a directory
   * without x, or a worker thread), through a descriptor opened without following a symlink, checked alike.
   */
  function enter(frame: Frame): Listing | undefined {
    try {
      process.chdir(frame.path);
    } catch {
      return enterByFd(frame);
    }
    const me = lstatSync(".");
    if (me.dev !== frame.dev || me.ino !== frame.ino) {
      t.skipped.vanished += 1;
      return undefined;
    }
    try {
      return { frame, names: readdirSync("."), i: 0 };
    } catch (err) {
      t.failed(errCode(err));
      return undefined;
    }
  }

  function reenter(frame: Frame): boolean {
    try {
      process.chdir(frame.path);
      const me = lstatSync(".");
      if (me.dev === frame.dev && me.ino === frame.ino) return true;
    } catch {}
    t.skipped.vanished += 1;
    return false;
  }

  function enterByFd(frame: Frame): Listing | undefined {
    let fd: number;
    try {
      fd = openSync(frame.path, DIR_NOFOLLOW);
    } catch (err) {
      t.failed(errCode(err));
      return undefined;
    }
    const st = fstatSync(fd);
    try {
      if (st.dev !== frame.dev || st.ino !== frame.ino) {
        t.skipped.vanished += 1;
        closeSync(fd);
        return undefined;
      }
      return { frame, names: readdirSync(fdPath(fd)), i: 0, fd };
    } catch (err) {
      closeSync(fd);
      t.failed(errCode(err));
      return undefined;
    }
  }

  function leave(): void {
    if (current?.fd !== undefined) closeSync(current.fd);
    current = undefined;
  }

  /** Main thread: runs until nothing is left to pop (true) or the slice is used up (false). */
  function slice(until: number): boolean {
    const home = process.cwd();
    try {
      return sliceIn(until);
    } finally {
      process.chdir(home);
    }
  }

  function sliceIn(until: number): boolean {
    let ops = 0;
    // A directory left unfinished by the last slice: back into it, checked again.
    if (current && current.fd === undefined && !reenter(current.frame)) current = undefined;
    for (;;) {
      if (!current) {
        const frame = stack.pop();
        if (!frame) return true;
        current = enter(frame);
        if (current) t.p.dirs += 1;
        continue;
      }
      const { names, frame } = current;
      const name = names[current.i++];
      if (name === undefined) {
        leave();
        continue;
      }
      const path = childPath(frame, name);
      if (o.avoid.has(path)) {
        t.skipped.network_fs += 1;
        continue;
      }
      if (tooLong(path)) {
        t.failed("ENAMETOOLONG");
        continue;
      }
      let st: Stats | undefined;
      try {
        st = lstatSync(current.fd === undefined ? name : fdPath(current.fd, name), NO_THROW);
      } catch (err) {
        // EACCES: a directory we may list but not search (r without x); ENAMETOOLONG: past PATH_MAX.
        t.failed(errCode(err));
        continue;
      }
      if (st) visit(frame, name, path, st);
      else t.skipped.vanished += 1;
      ops += 1;
      if ((ops & 63) === 0 && performance.now() >= until) return false;
    }
  }

  // The first report comes right after the first slice of a walk that goes on (however slow the machine, a
  // caller sees the walk under way), then one every progressEveryMs.
  let lastProgress: number | undefined;
  try {
    // The first slice always runs, so even the shortest deadline answers with something; the kernel's hard
    // stop comes 300 ms after the deadline, far beyond one slice.
    for (let first = true; ; first = false) {
      const now = performance.now();
      if (o.signal.aborted) {
        stopped = "cancelled";
        break;
      }
      if (!first && now >= o.deadline) {
        stopped = "deadline";
        break;
      }
      const empty = slice(first ? now + SLICE_MS : Math.min(now + SLICE_MS, o.deadline));
      const finished = empty;
      const sinceLast = lastProgress === undefined ? undefined : performance.now() - lastProgress;
      if (o.onProgress && (sinceLast === undefined ? !finished : sinceLast >= (o.progressEveryMs ?? 250))) {
        lastProgress = performance.now();
        o.onProgress({ ...t.p });
      }
      if (finished) {
        stopped = "done";
        break;
      }
      await yieldToLoop();
    }
  } finally {
    leave();
  }
  // Past PATH_MAX the sizes are lower bounds too, as at a deadline.
  const truncated = stopped !== "done" || t.skipped.too_deep > 0;
  return { ...t.p, entries: t.entries(), skipped: { ...t.skipped }, truncated, stopped };
}
