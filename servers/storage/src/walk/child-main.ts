/**
 * The walker child's program (ADR 0059): a Node process of its own, so it can chdir into each directory through
 * its descriptor and lstat entries by one name (~3 µs each, as du's fstatat, no procfs per entry) without
 * changing the serving process's cwd. It walks the subtrees the parent hands it, as the parent would (ADR 0026:
 * each directory opened without following a symlink and kept only if its device and inode are the ones its
 * parent's listing saw; du -x's rules), and reports in flushes, each one atomic: the sizes of the directories
 * it listed since the last flush, and which directories it now holds. A flush lost with the child (killed,
 * stalled) is simply walked again by the parent from the directories it last knew the child held: nothing is
 * counted twice or dropped. Hard-linked files are not counted here but sent by (dev, ino), so the parent counts
 * each once across itself and the child.
 *
 * Shipped as source (`walkChildMain.toString()`, `node -e`), like the kernel's spawn helper (ADR 0042): the
 * same text runs under vitest, from the server's bundle and from the orchestrator's. So the function is
 * self-contained: builtins through process.getBuiltinModule, no imports, no outer names.
 */

/** A directory to walk: where it is, what its parent's listing saw there, and where it sits in the tree. */
export interface ChildFrame {
  path: string;
  /** Relative to the walked root: also the frame's identity within a walk. */
  rel: string;
  depth: number;
  dev: number;
  ino: number;
}

export type ToWalkChild =
  | {
      t: "walk";
      walk: number;
      rootDev: number;
      oneFilesystem: boolean;
      avoid: string[];
      /** Directories down to this depth are reported on their own (the tool's depth). */
      depth: number;
      n: number;
    }
  | { t: "frames"; walk: number; frames: ChildFrame[] }
  /** The parent ran out: hand back the shallower half of what is held. */
  | { t: "give"; walk: number }
  | { t: "stop"; walk: number };

/** skipped, in this order: unreadable, other_fs, network_fs, vanished, too_deep. */
export type SkipCounts = [number, number, number, number, number];

export interface WalkChildFlush {
  t: "flush";
  walk: number;
  /** Frames the parent knew the child held, now listed (their entries are in this flush). */
  done: string[];
  /** Frames found and not yet listed: the child holds them now. */
  owned: ChildFrame[];
  /** Frames handed back, for the parent to walk. */
  released: ChildFrame[];
  /** Frames the child still holds after this flush. */
  pending: number;
  dirs: number;
  files: number;
  skipped: SkipCounts;
  /** [bucket, bytes, apparent]: a bucket is the deepest reported directory (depth ≤ the tool's) holding them. */
  sums: Array<[string, number, number]>;
  /** Files with nlink > 1, uncounted: [dev:ino, bucket, bytes, apparent, path relative to the root if reported]. */
  links: Array<[string, string, number, number, string]>;
  /** Files down to the tool's depth, the biggest n of them: [rel, bytes, apparent]. */
  top: Array<[string, number, number]>;
}

export function walkChildMain(): void {
  const fs = process.getBuiltinModule("node:fs") as typeof import("node:fs");
  const DIR_NOFOLLOW = fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW;
  const NO_THROW = { throwIfNoEntry: false } as const;
  const NEVER_WALKED = ["/proc", "/sys", "/dev"];
  const PATH_MAX = 4096;
  /** Directories listed between two looks at the channel: a flush every ~SLICE_MS while busy. */
  const SLICE_MS = 4;
  const UNREADABLE = 0;
  const OTHER_FS = 1;
  const NETWORK_FS = 2;
  const VANISHED = 3;
  const TOO_DEEP = 4;

  interface Frame {
    path: string;
    rel: string;
    depth: number;
    dev: number;
    ino: number;
    /** Where its entries' sizes go (see WalkChildFlush.sums). */
    bucket: string;
    /** Reported to the parent (handed by it, or in a flush's `owned`). */
    known: boolean;
  }
  type Job = Extract<ToWalkChild, { t: "walk" }>;
  type Acc = Omit<WalkChildFlush, "t" | "walk" | "owned" | "released" | "pending" | "sums"> & {
    sums: Map<string, [number, number]>;
  };

  let job: Job | undefined;
  let avoid = new Set<string>();
  let stack: Frame[] = [];
  let give = false;
  let scheduled = false;
  const fresh = (): Acc => ({
    done: [],
    dirs: 0,
    files: 0,
    skipped: [0, 0, 0, 0, 0],
    sums: new Map(),
    links: [],
    top: [],
  });
  let acc = fresh();

  const isInside = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`);
  const tooLong = (path: string) => path.length * 3 >= PATH_MAX && Buffer.byteLength(path) >= PATH_MAX;
  const byBytes = (a: [string, number, number], b: [string, number, number]) =>
    b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
  const bucketOf = (rel: string, depth: number, max: number) =>
    depth <= max ? rel : rel.split("/").slice(0, max).join("/");

  function failed(code: string | undefined): void {
    if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP") acc.skipped[VANISHED] += 1;
    else if (code === "ENAMETOOLONG") acc.skipped[TOO_DEEP] += 1;
    else acc.skipped[UNREADABLE] += 1;
  }

  function add(bucket: string, bytes: number, apparent: number): void {
    const s = acc.sums.get(bucket);
    if (s) {
      s[0] += bytes;
      s[1] += apparent;
    } else acc.sums.set(bucket, [bytes, apparent]);
  }

  /**
   * Enter a frame's directory if it is still the one its parent listed: the cwd is then that directory (a chdir
   * by path, checked by `stat(".")`: a component swapped for a symlink lands elsewhere and fails the check, and
   * the cwd pins the directory from then on), and each name resolves in it and nowhere else. Two calls where
   * open, fstat, a chdir through /proc/self/fd and a close were four. A directory that cannot be entered (r
   * without x) is opened instead, and listed and its names tried through the descriptor (they fail: EACCES).
   * Answers the prefix for its names, or undefined (counted).
   */
  function enter(f: Frame): { prefix: string; fd?: number } | undefined {
    try {
      process.chdir(f.path);
      const st = fs.statSync(".");
      if (st.dev === f.dev && st.ino === f.ino) return { prefix: "" };
      acc.skipped[VANISHED] += 1;
      return undefined;
    } catch {
      // Not entered: tried again by descriptor, which says why (ENOENT, ELOOP, EACCES…) or lists it.
    }
    let fd: number;
    try {
      fd = fs.openSync(f.path, DIR_NOFOLLOW);
    } catch (err) {
      failed((err as NodeJS.ErrnoException).code);
      return undefined;
    }
    const st = fs.fstatSync(fd);
    if (st.dev === f.dev && st.ino === f.ino) return { prefix: `/proc/self/fd/${fd}/`, fd };
    fs.closeSync(fd);
    acc.skipped[VANISHED] += 1;
    return undefined;
  }

  /** One directory, whole: entered, listed, its entries lstat'ed by name. */
  function list(j: Job, f: Frame): void {
    const at = enter(f);
    if (!at) return;
    const { prefix } = at;
    try {
      let names: string[];
      try {
        names = fs.readdirSync(prefix === "" ? "." : prefix);
      } catch (err) {
        failed((err as NodeJS.ErrnoException).code);
        return;
      }
      acc.dirs += 1;
      const depth = f.depth + 1;
      const keepFiles = j.n * 2 + 256;
      // Per entry only what it needs: its path is built for a directory, a possible mount point or a long name.
      const base = f.path === "/" ? "/" : `${f.path}/`;
      const relBase = f.rel ? `${f.rel}/` : "";
      const checkAvoid = avoid.size > 0;
      let fileBytes = 0;
      let fileApparent = 0;
      for (const name of names) {
        if (checkAvoid && avoid.has(base + name)) {
          acc.skipped[NETWORK_FS] += 1;
          continue;
        }
        if ((base.length + name.length) * 3 >= PATH_MAX && tooLong(base + name)) {
          acc.skipped[TOO_DEEP] += 1;
          continue;
        }
        let e: import("node:fs").Stats | undefined;
        try {
          e = fs.lstatSync(prefix + name, NO_THROW);
        } catch (err) {
          failed((err as NodeJS.ErrnoException).code);
          continue;
        }
        if (!e) {
          acc.skipped[VANISHED] += 1;
          continue;
        }
        if (e.dev !== j.rootDev && (j.oneFilesystem || NEVER_WALKED.some((n) => isInside(base + name, n)))) {
          acc.skipped[OTHER_FS] += 1;
          continue;
        }
        const bytes = e.blocks * 512;
        const apparent = e.size;
        if (e.isDirectory()) {
          const rel = relBase + name;
          const bucket = depth <= j.depth ? rel : f.bucket;
          add(bucket, bytes, apparent);
          stack.push({ path: base + name, rel, depth, dev: e.dev, ino: e.ino, bucket, known: false });
          continue;
        }
        const reported = depth <= j.depth && e.isFile();
        if (e.nlink > 1) {
          acc.links.push([`${e.dev}:${e.ino}`, f.bucket, bytes, apparent, reported ? relBase + name : ""]);
          continue;
        }
        acc.files += 1;
        fileBytes += bytes;
        fileApparent += apparent;
        if (reported) {
          acc.top.push([relBase + name, bytes, apparent]);
          if (acc.top.length > keepFiles) acc.top = acc.top.sort(byBytes).slice(0, j.n);
        }
      }
      if (fileBytes > 0 || fileApparent > 0) add(f.bucket, fileBytes, fileApparent);
    } finally {
      if (at.fd !== undefined) fs.closeSync(at.fd);
    }
  }

  function flush(j: Job): void {
    // Handed back from the bottom of the stack: the shallowest directories, the biggest subtrees.
    const released = give ? stack.splice(0, Math.floor(stack.length / 2)) : [];
    give = false;
    const owned: ChildFrame[] = [];
    for (const f of stack) {
      if (f.known) continue;
      f.known = true;
      owned.push({ path: f.path, rel: f.rel, depth: f.depth, dev: f.dev, ino: f.ino });
    }
    const message: WalkChildFlush = {
      t: "flush",
      walk: j.walk,
      done: acc.done,
      owned,
      released: released.map((f) => ({ path: f.path, rel: f.rel, depth: f.depth, dev: f.dev, ino: f.ino })),
      pending: stack.length,
      dirs: acc.dirs,
      files: acc.files,
      skipped: acc.skipped,
      sums: [...acc.sums].map(([k, [b, a]]) => [k, b, a]),
      links: acc.links,
      top: acc.top.sort(byBytes).slice(0, j.n),
    };
    acc = fresh();
    process.send?.(message);
  }

  function run(): void {
    scheduled = false;
    const j = job;
    if (!j) return;
    const until = performance.now() + SLICE_MS;
    for (;;) {
      const f = stack.pop();
      if (!f) break;
      if (f.known) acc.done.push(f.rel);
      list(j, f);
      if (give || performance.now() >= until) break;
    }
    flush(j);
    if (stack.length > 0) schedule();
    else leave();
  }

  /** Out of the last directory entered: an idle child must not hold a filesystem busy (umount's EBUSY). */
  function leave(): void {
    try {
      process.chdir("/");
    } catch {
      // "/" is always there.
    }
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(run);
  }

  process.on("message", (m: ToWalkChild) => {
    if (m.t === "walk") {
      job = m;
      avoid = new Set(m.avoid);
      stack = [];
      give = false;
      acc = fresh();
      return;
    }
    if (!job || m.walk !== job.walk) return;
    if (m.t === "stop") {
      job = undefined;
      stack = [];
      leave();
      return;
    }
    if (m.t === "give") give = true;
    else {
      const d = job.depth;
      for (const f of m.frames) stack.push({ ...f, bucket: bucketOf(f.rel, f.depth, d), known: true });
    }
    schedule();
  });
  // The parent is gone (or let go of us): nothing to walk for.
  process.on("disconnect", () => process.exit(0));
}
