/**
 * The directory walk under top_consumers: sizes like `du -x` (allocated blocks × 512, each directory's own
 * blocks included, a hard-linked file counted once, symlinks never followed: lstat only), the biggest entries
 * down to a depth, stopped at a deadline or an abort with what it has.
 *
 * Why two kinds of work at once: du is one thread of fstatat calls. Here the main thread lists and lstats
 * directories synchronously in slices of at most SLICE_MS, yielding to the event loop between slices (other
 * requests, the deadline, the abort), while LANES async lanes take whole directories from the other end of the
 * same stack and lstat their entries in libuv's thread pool, on another core. On 20k files, in-process, the
 * sync part alone measured ~1.5× du's time and async alone ~2×; with the lanes, ~0.85× du in the quietest run
 * (on this 2-core machine shared at load 9–11 the ratio swung 0.6–1.9×; see bench/latency.ts).
 *
 * A sync call can only stall on a filesystem whose server stalls: network and FUSE mounts are never entered or
 * even lstat'ed (their mount points come from the mount table before the walk), and a walk never starts on one.
 *
 * Confined by descriptors, not path strings (a local user may rename or swap directories under a walk in
 * /tmp): each directory is opened without following a symlink and kept only if its device and inode are the
 * ones its parent's listing saw; it is listed and its entries lstat'ed through its descriptor
 * (/proc/self/fd/<fd>/<name>, like fstatat), so a component swapped for a symlink above it leads nowhere.
 *
 * A walk that outlasts its first slice also hands whole directories to the walker children (split.ts, child.ts,
 * ADR 0059), processes of their own on the other cores, in place of the lanes: they walk them the same way and
 * report in atomic flushes (sizes by directory, the directories they hold, hard-linked files by device and
 * inode, counted here once). This side keeps the deadline, the abort, progress and the answer; what a child
 * that dies or stalls held is walked again.
 */
import { closeSync, fstatSync, lstatSync, openSync, readdirSync, type Stats } from "node:fs";
import { lstat, open, readdir } from "node:fs/promises";
import { setImmediate as yieldToLoop } from "node:timers/promises";
import { DIR_NOFOLLOW, fdPath } from "@roadnerd/conventions";
import type { ChildFrame, WalkChildFlush } from "./child-main.ts";
import { isInside, NEVER_WALKED } from "./scan-path.ts";
import { createSplit } from "./split.ts";

export const SLICE_MS = 8;
/** Async lanes beside the main thread, and the lstat calls each keeps in flight. */
export const LANES = 2;
const LANE_BATCH = 16;
const NO_THROW = { throwIfNoEntry: false } as const;

export interface WalkNode {
  /** Path relative to the walked directory ("log/journal"). */
  name: string;
  type: "dir" | "file";
  bytes: number;
  apparent: number;
}

export interface WalkProgress {
  dirs: number;
  files: number;
  bytes: number;
  apparent: number;
}

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

interface Frame {
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

function byBytes(a: WalkNode, b: WalkNode): number {
  return b.bytes - a.bytes || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/** The n biggest of `more` added to `top`, without sorting every directory of a large tree. */
function topN(top: WalkNode[], more: readonly WalkNode[], n: number): WalkNode[] {
  let best = top.sort(byBytes).slice(0, n);
  for (const node of more) {
    const last = best[best.length - 1];
    if (best.length >= n && last && byBytes(node, last) >= 0) continue;
    let i = best.length;
    while (i > 0 && byBytes(node, best[i - 1] as WalkNode) < 0) i -= 1;
    best.splice(i, 0, node);
    if (best.length > n) best = best.slice(0, n);
  }
  return best;
}

const errCode = (err: unknown) => (err as NodeJS.ErrnoException).code;

export async function walk(o: WalkOptions): Promise<WalkResult> {
  const rootStat = lstatSync(o.root);
  const rootId = o.rootId ?? { dev: rootStat.dev, ino: rootStat.ino };
  const rootDev = rootStat.dev;
  const p: WalkProgress = { dirs: 0, files: 0, bytes: rootStat.blocks * 512, apparent: rootStat.size };
  const skipped = { unreadable: 0, other_fs: 0, network_fs: 0, vanished: 0, too_deep: 0 };
  /** Directories down to o.depth, by path from the root: found here or in the child's flushes. */
  const dirNodes = new Map<string, WalkNode>();
  let fileNodes: WalkNode[] = [];
  const seen = new Set<string>();
  const keepFiles = o.n * 2 + 256;
  // Directories to read: the main thread pops from the end (depth first), lanes take from `head`.
  let stack: Frame[] = [{ path: o.root, rel: "", depth: 0, chain: [], ...rootId }];
  let head = 0;
  let current: { names: string[]; i: number; frame: Frame; fd: number } | undefined;
  let stopped: WalkResult["stopped"] | undefined;

  const pending = () => stack.length - head;
  const childPath = (frame: Frame, name: string) => (frame.path === "/" ? `/${name}` : `${frame.path}/${name}`);

  /** An entry that could not be read, by why: gone meanwhile, a path past PATH_MAX, or no permission. */
  function failed(code: string | undefined): void {
    // ELOOP: a directory swapped for a symlink since its parent was listed.
    if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP") skipped.vanished += 1;
    else if (code === "ENAMETOOLONG") skipped.too_deep += 1;
    else skipped.unreadable += 1;
  }

  function listFailed(err: unknown): void {
    failed(errCode(err));
  }

  /** Count one entry and queue it if it is a directory to enter. */
  function visit(frame: Frame, name: string, path: string, st: Stats): void {
    const isDir = st.isDirectory();
    if (st.dev !== rootDev && (o.oneFilesystem || NEVER_WALKED.some((n) => isInside(path, n)))) {
      skipped.other_fs += 1;
      return;
    }
    if (!isDir && st.nlink > 1) {
      const key = `${st.dev}:${st.ino}`;
      if (seen.has(key)) return;
      seen.add(key);
    }
    const bytes = st.blocks * 512;
    const apparent = st.size;
    if (!isDir) p.files += 1;
    p.bytes += bytes;
    p.apparent += apparent;
    for (const node of frame.chain) {
      node.bytes += bytes;
      node.apparent += apparent;
    }
    const depth = frame.depth + 1;
    if (isDir) {
      const rel = frame.rel ? `${frame.rel}/${name}` : name;
      let chain = frame.chain;
      if (depth <= o.depth) {
        const node = nodeFor(rel);
        node.bytes += bytes;
        node.apparent += apparent;
        chain = [...chain, node];
      }
      stack.push({ path, rel, depth, chain, dev: st.dev, ino: st.ino });
    } else if (depth <= o.depth && st.isFile()) {
      keepFile({ name: frame.rel ? `${frame.rel}/${name}` : name, type: "file", bytes, apparent });
    }
  }

  function nodeFor(rel: string): WalkNode {
    let node = dirNodes.get(rel);
    if (!node) {
      node = { name: rel, type: "dir", bytes: 0, apparent: 0 };
      dirNodes.set(rel, node);
    }
    return node;
  }

  /** `bytes` under the directory `bucket` (a path from the root, depth ≤ o.depth): its node and every one above. */
  function addUnder(bucket: string, bytes: number, apparent: number): void {
    p.bytes += bytes;
    p.apparent += apparent;
    if (bucket === "") return;
    for (let at = bucket.indexOf("/"); ; at = bucket.indexOf("/", at + 1)) {
      const node = nodeFor(at < 0 ? bucket : bucket.slice(0, at));
      node.bytes += bytes;
      node.apparent += apparent;
      if (at < 0) return;
    }
  }

  function keepFile(node: WalkNode): void {
    fileNodes.push(node);
    if (fileNodes.length > keepFiles) fileNodes = fileNodes.sort(byBytes).slice(0, o.n);
  }

  /** The directory a frame names, opened, if it is still the one its parent listed (else counted, undefined). */
  function openFrame(frame: Frame): number | undefined {
    let fd: number;
    try {
      fd = openSync(frame.path, DIR_NOFOLLOW);
    } catch (err) {
      listFailed(err);
      return undefined;
    }
    const st = fstatSync(fd);
    if (st.dev === frame.dev && st.ino === frame.ino) return fd;
    closeSync(fd);
    skipped.vanished += 1;
    return undefined;
  }

  /** Main thread: runs until nothing is left to pop (true) or the slice is used up (false). */
  function slice(until: number): boolean {
    const home = process.cwd();
    try {
      return sliceIn(until);
    } finally {
      if (prefix === "") process.chdir(home);
    }
  }

  /**
   * Entries are lstat'ed relative to the directory being listed, like fstatat: the main thread chdirs into it
   * through its descriptor (a one-name lookup per entry, as du does), and back at the end of the slice, so no
   * other code ever sees the change (it runs between slices). Where chdir is not allowed (a worker thread) or
   * not possible (a directory without x), through /proc/self/fd/<fd>/<name>.
   */
  let prefix = "";
  function enter(fd: number): void {
    try {
      process.chdir(fdPath(fd));
      prefix = "";
    } catch {
      prefix = `${fdPath(fd)}/`;
    }
  }

  function sliceIn(until: number): boolean {
    let ops = 0;
    if (current) enter(current.fd);
    for (;;) {
      if (!current) {
        if (pending() === 0) return true;
        const frame = stack.pop() as Frame;
        const fd = openFrame(frame);
        if (fd === undefined) continue;
        try {
          // Names only (no d_type): every entry is lstat'ed anyway. One call per directory is the fastest read;
          // listed as "." once entered through its descriptor: no second open through procfs (ADR 0050).
          enter(fd);
          current = { names: readdirSync(prefix === "" ? "." : fdPath(fd)), i: 0, frame, fd };
          p.dirs += 1;
        } catch (err) {
          closeSync(fd);
          listFailed(err);
        }
        continue;
      }
      const { names, frame, fd } = current;
      const name = names[current.i++];
      if (name === undefined) {
        closeSync(fd);
        current = undefined;
        continue;
      }
      const path = childPath(frame, name);
      if (o.avoid.has(path)) {
        skipped.network_fs += 1;
        continue;
      }
      if (tooLong(path)) {
        failed("ENAMETOOLONG");
        continue;
      }
      let st: Stats | undefined;
      try {
        st = lstatSync(prefix + name, NO_THROW);
      } catch (err) {
        // EACCES: a directory we may list but not search (r without x); ENAMETOOLONG: past PATH_MAX.
        failed(errCode(err));
        continue;
      }
      if (st) visit(frame, name, path, st);
      else skipped.vanished += 1;
      ops += 1;
      if ((ops & 63) === 0 && performance.now() >= until) return false;
    }
  }

  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };

  /** An async lane: whole directories from the far end of the stack, lstat in the thread pool. */
  async function lane(): Promise<void> {
    while (!stopped && !split.active() && pending() > 1) {
      const frame = takeHead();
      let dir: Awaited<ReturnType<typeof open>>;
      try {
        dir = await open(frame.path, DIR_NOFOLLOW);
      } catch (err) {
        if (!stopped) listFailed(err);
        continue;
      }
      try {
        await laneList(frame, dir.fd, await dir.stat());
      } catch (err) {
        if (!stopped) listFailed(err);
      } finally {
        await dir.close();
      }
    }
  }

  /** A lane's one directory, through its descriptor, if it is still the one its parent listed. */
  async function laneList(frame: Frame, fd: number, st: Stats): Promise<void> {
    if (stopped) return;
    if (st.dev !== frame.dev || st.ino !== frame.ino) {
      skipped.vanished += 1;
      return;
    }
    const names = await readdir(fdPath(fd));
    if (stopped) return;
    p.dirs += 1;
    for (let i = 0; i < names.length && !stopped; i += LANE_BATCH) {
      const batch = names.slice(i, i + LANE_BATCH);
      const stats = await Promise.all(
        batch.map((name) => {
          const path = childPath(frame, name);
          if (o.avoid.has(path)) return "avoid";
          if (tooLong(path)) return "ENAMETOOLONG";
          return lstat(fdPath(fd, name)).catch((err: unknown) => errCode(err) ?? "EIO");
        }),
      );
      if (stopped) return;
      stats.forEach((st, j) => {
        const name = batch[j] as string;
        if (typeof st !== "string") visit(frame, name, childPath(frame, name), st);
        else if (st === "avoid") skipped.network_fs += 1;
        else failed(st);
      });
      notify();
    }
  }

  /** The shallowest directory waiting (the biggest subtree, likely): for a lane or the child. */
  function takeHead(): Frame {
    const frame = stack[head] as Frame;
    head += 1;
    if (head > 1024 && head * 2 > stack.length) {
      stack = stack.slice(head);
      head = 0;
    }
    return frame;
  }

  const lanes = new Set<Promise<void>>();
  function startLanes(): void {
    while (!split.active() && lanes.size < LANES && pending() > 1) {
      // Woken once the lane is out of the set, so the main loop sees it gone.
      const l: Promise<void> = lane().finally(() => {
        lanes.delete(l);
        notify();
      });
      lanes.add(l);
    }
  }

  // The walker children (ADR 0059): they take directories from the shallow end, as the lanes would.
  const split = createSplit<Frame>({
    job: { rootDev, oneFilesystem: o.oneFilesystem, avoid: [...o.avoid], depth: o.depth, n: o.n },
    pending,
    takeHead,
    push: (frame) => stack.push(frame),
    frameOf,
    midDirectory: () => current !== undefined,
    stopped: () => stopped !== undefined,
    count,
    notify,
  });

  /** A frame from a child: its tracked ancestors (and itself, if tracked) found by path. */
  function frameOf(f: ChildFrame): Frame {
    const parts = f.rel.split("/");
    const chain: WalkNode[] = [];
    for (let k = 1; k <= Math.min(f.depth, o.depth); k++) chain.push(nodeFor(parts.slice(0, k).join("/")));
    return { ...f, chain };
  }

  /** A child's flush: sizes by bucket, hard-linked files counted here once, the biggest files. */
  function count(m: WalkChildFlush): void {
    p.dirs += m.dirs;
    p.files += m.files;
    skipped.unreadable += m.skipped[0];
    skipped.other_fs += m.skipped[1];
    skipped.network_fs += m.skipped[2];
    skipped.vanished += m.skipped[3];
    skipped.too_deep += m.skipped[4];
    for (const [bucket, bytes, apparent] of m.sums) addUnder(bucket, bytes, apparent);
    for (const [key, bucket, bytes, apparent, rel] of m.links) {
      if (seen.has(key)) continue;
      seen.add(key);
      p.files += 1;
      addUnder(bucket, bytes, apparent);
      if (rel) keepFile({ name: rel, type: "file", bytes, apparent });
    }
    for (const [name, bytes, apparent] of m.top) keepFile({ name, type: "file", bytes, apparent });
  }

  /** Wait for a lane or the child to report, the deadline, the abort, or the child's stall limit. */
  function idle(): Promise<void> {
    return new Promise((resolve) => {
      const until = Math.min(o.deadline, split.lookAt());
      const t = setTimeout(done, Math.max(0, until - performance.now()));
      o.signal.addEventListener("abort", done, { once: true });
      wake = done;
      function done() {
        clearTimeout(t);
        o.signal.removeEventListener("abort", done);
        resolve();
      }
    });
  }

  // The first report comes right after the first slice of a walk that goes on (however slow the machine, a
  // caller sees the walk under way), then one every progressEveryMs.
  let lastProgress: number | undefined;
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
    // Shorter slices while children walk: this thread then mostly hands out work, and they wait for it.
    const sliceMs = split.active() ? SLICE_MS / 2 : SLICE_MS;
    const empty = split.walksHere() ? slice(first ? now + sliceMs : Math.min(now + sliceMs, o.deadline)) : true;
    split.tend();
    startLanes();
    const finished = empty && !current && lanes.size === 0 && pending() === 0 && split.held() === 0;
    const sinceLast = lastProgress === undefined ? undefined : performance.now() - lastProgress;
    if (o.onProgress && (sinceLast === undefined ? !finished : sinceLast >= (o.progressEveryMs ?? 250))) {
      lastProgress = performance.now();
      o.onProgress({ ...p });
    }
    if (finished) {
      stopped = "done";
      break;
    }
    if (empty && !current) await idle();
    else await yieldToLoop();
  }
  if (current) closeSync(current.fd);
  current = undefined;
  split.release();
  // Lanes still in flight drop what they get from now on (and close their directory): the answer is fixed here.
  const entries = topN([...fileNodes], [...dirNodes.values()], o.n).map((e) => ({ ...e }));
  // Past PATH_MAX the sizes are lower bounds too, as at a deadline.
  return { ...p, entries, skipped: { ...skipped }, truncated: stopped !== "done" || skipped.too_deep > 0, stopped };
}
