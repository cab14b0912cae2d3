/**
 * Paths inside a filesystem root, resolved the way a chroot would: every symlink is followed by us, component by
 * component, an absolute target restarts at the root and `..` never climbs above it. Nothing outside the root
 * is ever opened, whatever the links say, nor whatever is renamed or swapped while the path is followed.
 *
 * Synchronous calls: each is a few microseconds on the small local files of /etc, /run and /sys, where a
 * thread-pool round trip per component (a path is a dozen lstat/open/readlink calls) cost milliseconds on a
 * loaded machine, and dns_config_get makes several such lookups (issue 17: 27 ms for 0.3 ms of reading).
 *
 * The root `/` is walked by plain paths: nothing can lead outside it, so the descriptors that hold a mounted
 * root's walk in place buy nothing there, and a lookup through /proc/self/fd costs 3-4× a plain one (issue 17:
 * dns_config_get spent 0.3 ms a call in these walks).
 */
import { closeSync, constants, lstatSync, openSync, readlinkSync, type Stats, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { DIR_NOFOLLOW, DiagError, fdPath } from "@roadnerd/conventions";

/** Linux's own bound on symlinks followed in one lookup (MAXSYMLINKS). */
export const MAX_SYMLINK_HOPS = 40;

export interface RootPath {
  /** Where the path leads inside the root, every symlink followed (absolute, as seen from inside the root). */
  path: string;
  /** The host path of `path` (root joined with it). */
  hostPath: string;
  /** Each symlink followed, in order: where it was and what it says. */
  links: Array<{ link: string; target: string }>;
  /** Why the path leads nowhere: a missing component, a symlink loop, a non-directory in the middle. */
  problem?: "missing" | "loop" | "not_a_directory" | "unreadable";
  /** A symlink's `..` tried to climb above the root and was held at it (as chroot does). */
  climbed: boolean;
}

function parts(path: string): string[] {
  return path.split("/").filter((p) => p !== "" && p !== ".");
}

export function hostPathOf(root: string, inside: string): string {
  return join(root, inside);
}

/**
 * What a path leads to, held open: the directory it ends in and the last name inside it (or no name when the
 * path ends at that directory itself). `dir` is the held descriptor's /proc/self/fd path, or under the root `/`
 * the directory's own path. Reads go through these, never through `hostPath`.
 */
export interface HeldPath {
  at: RootPath;
  dir: string;
  name?: string;
  /** Under the root `/`: `dir` is a plain path and no descriptor is held. */
  plain: boolean;
  /** The last component's lstat, taken by the walk (none when the path ends at the root or has a problem). */
  stat?: Stats;
  close(): Promise<void>;
}

/** `name` inside a held directory path. */
export const inDir = (dir: string, name: string): string => (dir === "/" ? `/${name}` : `${dir}/${name}`);

/** A directory reached by the walk: its descriptor (-1 under `/`, where none is held) and the path to use. */
interface Reached {
  fd: number;
  path: string;
  /** Held paths that end in it and are not closed yet. */
  users: number;
  /** Out of the turn's table: its descriptor closes with its last user. */
  swept: boolean;
  /** In the turn's table; else the walk that opened it closes it when it leaves it (or its last user does). */
  cached: boolean;
  /**
   * What this turn found inside it, by name: directories reached (in the table), names missing, links read
   * (their targets). By name within the directory, never by a joined path: a key is at most NAME_MAX bytes, and
   * a step costs the same however deep it is (stop 34's review: 64-deep paths of 250-byte names made each key
   * ~16 KB and doubled one call's memory).
   */
  children?: Map<string, Reached>;
  missing?: Set<string>;
  links?: Map<string, string>;
}

/**
 * Directories the turn's table holds at most: a planted tree of 676 directories a link, `..` after each, held
 * 20,000 descriptors (the process's limit) for one call (stop 33's review). Past it a walk closes what it leaves.
 */
export const TURN_DIRS_AT_MOST = 256;
/**
 * Path components one lookup goes through at most, links' included: 40 links of 4 KiB each make ~80,000, a
 * second of synchronous walking. Past it the path is a loop, as ELOOP would call it.
 */
export const COMPONENTS_AT_MOST = 4096;
/**
 * Components all the lookups of one turn go through at most (a call's lookups run in one turn): a tree of
 * 2,000-deep directories behind dozens of links stalled the event loop for seconds with each lookup under the
 * bound above (stop 33's second review). A real system's whole dns_config_get walks a few hundred. Past it, the
 * turn's further lookups are loops.
 */
export const TURN_COMPONENTS_AT_MOST = 8192;
/** Directories deep a path may lead, at most (/etc, /run and /sys are a dozen deep): deeper is a loop. */
export const DEPTH_AT_MOST = 64;
let turnSteps = 0;

/**
 * Directories reached in this turn of the event loop: the roots by their path, each directory under its parent.
 * One call looks up a dozen paths under the same few directories (/run/systemd, /sys/class/net…), all within
 * one turn (the reads are synchronous): each directory is looked up and opened once, not once a path (issue 17:
 * under a mounted root, where every lookup goes through /proc/self/fd, dns_config_get spent ~1 ms in these
 * walks). Names found missing and links read are kept the same way: resolved_status asks three paths under a
 * missing /run/systemd/resolve and reaches /usr/lib twice through the /lib link (7 of its 24 lookups a call were
 * answered already). Swept at the next turn, so nothing is remembered past the instant it was looked at.
 */
const turnRoots = new Map<string, Reached>();
/** Every directory in the turn's table (at most TURN_DIRS_AT_MOST), for the sweep. */
const turnDirs: Reached[] = [];
/**
 * Bytes of link targets the turn remembers at most (a target is up to 4 KiB; a turn reads up to
 * TURN_COMPONENTS_AT_MOST of them): past it a link is read again when met again.
 */
export const TURN_LINK_BYTES_AT_MOST = 256 * 1024;
let turnLinkBytes = 0;
let sweepQueued = false;

function sweep(): void {
  sweepQueued = false;
  turnSteps = 0;
  turnLinkBytes = 0;
  for (const dir of turnDirs) {
    dir.swept = true;
    if (dir.users === 0 && dir.fd >= 0) closeSync(dir.fd);
  }
  turnDirs.length = 0;
  turnRoots.clear();
}

/**
 * A directory the walk opened, `name` inside `parent` (no parent: the root): in the turn's table while there is
 * room, else the walk's own.
 */
function reached(parent: Reached | undefined, name: string, fd: number, path: string): Reached {
  const dir: Reached = { fd, path, users: 0, swept: false, cached: turnDirs.length < TURN_DIRS_AT_MOST };
  if (!dir.cached) return dir;
  turnDirs.push(dir);
  if (!parent) turnRoots.set(name, dir);
  else {
    parent.children ??= new Map();
    parent.children.set(name, dir);
  }
  queueSweep();
  return dir;
}

function queueSweep(): void {
  if (!sweepQueued) {
    sweepQueued = true;
    setImmediate(sweep);
  }
}

/** `name` is missing inside `dir`, for the rest of the turn (only a directory in the table remembers). */
function rememberMissing(dir: Reached, name: string): void {
  if (!dir.cached || dir.swept) return;
  dir.missing ??= new Set();
  dir.missing.add(name);
}

function rememberLink(dir: Reached, name: string, target: string): void {
  if (!dir.cached || dir.swept || turnLinkBytes + target.length > TURN_LINK_BYTES_AT_MOST) return;
  turnLinkBytes += target.length;
  dir.links ??= new Map();
  dir.links.set(name, target);
}

function release(dir: Reached): void {
  dir.users -= 1;
  if (dir.users === 0 && (dir.swept || !dir.cached) && dir.fd >= 0) closeSync(dir.fd);
}

/** Directories a walk leaves: those it opened outside the turn's table are closed now. */
function leave(dirs: Reached[]): void {
  for (const d of dirs) if (!d.cached && d.users === 0 && d.fd >= 0) closeSync(d.fd);
}

/** Follow `path` (absolute, inside the root) to what it names, never leaving `root`. */
export async function resolveInRoot(root: string, path: string, maxHops = MAX_SYMLINK_HOPS): Promise<RootPath> {
  const held = await holdInRoot(root, path, maxHops);
  await held.close();
  return held.at;
}

/**
 * The same, by descriptor (openat-style, which a string path is not: a component swapped for a symlink after
 * it was checked would lead a later open outside): the root is opened once, every lookup below it goes
 * through the descriptor of the directory reached so far (/proc/self/fd/<fd>/<name>), and every directory
 * is opened without following a symlink. The caller reads through the result and closes it.
 */
export async function holdInRoot(root: string, path: string, maxHops = MAX_SYMLINK_HOPS): Promise<HeldPath> {
  let todo = parts(path);
  let done: string[] = [];
  const links: RootPath["links"] = [];
  let climbed = false;
  const plain = resolve(root) === "/";
  // dirs[i] holds done[0..i-1]: dirs[0] is the root.
  // The root itself is configuration, trusted as written (it may be a symlink).
  let rootDir = turnRoots.get(root);
  if (!rootDir) {
    if (plain) rootDir = reached(undefined, root, -1, "/");
    else {
      try {
        const fd = openSync(root, constants.O_RDONLY | constants.O_DIRECTORY);
        rootDir = reached(undefined, root, fd, fdPath(fd));
      } catch {
        const at = { path: path, hostPath: hostPathOf(root, path), links, climbed, problem: "unreadable" as const };
        return { at, dir: root, plain, close: async () => {} };
      }
    }
  }
  const dirs: Reached[] = [rootDir];
  const top = () => dirs[dirs.length - 1] as Reached;
  let last: Stats | undefined;
  const held = (problem?: RootPath["problem"]): HeldPath => {
    const inside = `/${[...done, ...(problem ? todo : [])].join("/")}`;
    const at = { path: inside, hostPath: hostPathOf(root, inside), links, climbed, ...(problem ? { problem } : {}) };
    // Each directory gone through is open; a last component is not (it is read by the caller, by name).
    const ends = dirs.length === done.length + 1;
    const dir = top();
    dir.users += 1;
    // The caller reads through the last directory only: the walk's own others close now.
    leave(dirs.slice(0, -1));
    let open = true;
    return {
      at,
      dir: dir.path,
      plain,
      ...(ends ? {} : { name: done[done.length - 1] }),
      ...(last && !problem ? { stat: last } : {}),
      close: async () => {
        if (open) release(dir);
        open = false;
      },
    };
  };
  const lost = (part: string, err: unknown): HeldPath => {
    todo.unshift(part);
    const code = (err as NodeJS.ErrnoException).code;
    return held(code === "ENOENT" ? "missing" : code === "ENOTDIR" ? "not_a_directory" : "unreadable");
  };
  /** The link `part` (inside the directory reached so far) says `target`: go on from there, or stop at the hop bound. */
  const followLink = (part: string, target: string): HeldPath | undefined => {
    if (links.length >= maxHops) {
      todo.unshift(part);
      return held("loop");
    }
    links.push({ link: `/${[...done, part].join("/")}`, target });
    if (target.startsWith("/")) {
      done = [];
      leave(dirs.splice(1));
    }
    todo = [...parts(target), ...todo];
    return undefined;
  };
  let steps = 0;
  // The turn's count is swept with its table: a walk counts even when nothing else is remembered.
  queueSweep();
  while (todo.length > 0) {
    if (++steps > COMPONENTS_AT_MOST || ++turnSteps > TURN_COMPONENTS_AT_MOST || done.length > DEPTH_AT_MOST)
      return held("loop");
    const part = todo.shift() as string;
    if (part === "..") {
      if (done.length === 0) climbed = true;
      else {
        leave(dirs.splice(-1));
        done.pop();
      }
      continue;
    }
    // A directory on the way, reached already this turn: no lookup. Nor for a name found missing, or a link
    // read, this turn.
    const parent = top();
    const known = todo.length > 0 ? parent.children?.get(part) : undefined;
    if (known) {
      done.push(part);
      dirs.push(known);
      continue;
    }
    if (parent.missing?.has(part)) return lost(part, { code: "ENOENT" });
    const here = inDir(parent.path, part);
    const readTarget = parent.links?.get(part);
    if (readTarget !== undefined) {
      const hop = followLink(part, readTarget);
      if (hop) return hop;
      continue;
    }
    // Under a mounted root, a directory on the way is opened first: one lookup through /proc/self/fd instead of
    // two (lstat, then open) when it is one. Not a directory, or a link (O_NOFOLLOW): the lstat below says which.
    if (!plain && todo.length > 0) {
      try {
        const fd = openSync(here, DIR_NOFOLLOW);
        done.push(part);
        dirs.push(reached(parent, part, fd, fdPath(fd)));
        continue;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") {
          rememberMissing(parent, part);
          return lost(part, err);
        }
      }
    }
    let st: ReturnType<typeof lstatSync>;
    try {
      // A missing name is the common answer here (no resolved, no networkd): no exception built for it.
      st = lstatSync(here, { throwIfNoEntry: false });
    } catch (err) {
      return lost(part, err);
    }
    if (!st) {
      rememberMissing(parent, part);
      return lost(part, { code: "ENOENT" });
    }
    if (st.isSymbolicLink()) {
      let target: string;
      try {
        target = readlinkSync(here);
      } catch {
        // Listed but not readable as a link (EACCES on /proc/<pid>/root and the like).
        todo.unshift(part);
        return held("unreadable");
      }
      rememberLink(parent, part, target);
      const hop = followLink(part, target);
      if (hop) return hop;
      continue;
    }
    done.push(part);
    if (todo.length === 0) {
      last = st;
      break;
    }
    if (!st.isDirectory()) return held("not_a_directory");
    if (plain) {
      dirs.push(reached(parent, part, -1, here));
      continue;
    }
    try {
      const fd = openSync(here, DIR_NOFOLLOW);
      dirs.push(reached(parent, part, fd, fdPath(fd)));
    } catch (err) {
      done.pop();
      return lost(part, err);
    }
  }
  return held();
}

/**
 * The root must be a directory we can read; anything else cannot be diagnosed here. The root `/` is one by
 * definition: no stat a call (issue 17: the one syscall the plain walk did not need).
 */
export async function assertRoot(root: string): Promise<void> {
  if (root === "/") return;
  let st: ReturnType<typeof statSync> | undefined;
  try {
    st = statSync(root);
  } catch {}
  if (!st?.isDirectory()) {
    throw new DiagError("E_UNSUPPORTED", `DNS_CONFIG_ROOT ${root} is not a readable directory`, {
      hint: "set DNS_CONFIG_ROOT to a mounted filesystem root, or leave it unset for /",
    });
  }
}
