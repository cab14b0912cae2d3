/**
 * Paths inside a filesystem root, resolved the way a chroot would: every symlink is followed by us, component by
 * component, an absolute target restarts at the root and `..` never climbs above it. Nothing outside the root
 * is ever opened, whatever the links say, nor whatever is renamed or swapped while the path is followed.
 *
 * Synchronous calls: each is a few microseconds on the small local files of /etc, /run and /sys, where a
 * thread-pool round trip per component (a path is a dozen lstat/open/readlink calls) cost milliseconds on a
 * loaded machine, and dns_config_get makes several such lookups (issue 17: 27 ms for 0.3 ms of reading).
 */
import { closeSync, constants, lstatSync, openSync, readlinkSync, statSync } from "node:fs";
import { join } from "node:path";
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
 * What a path leads to, held open: the directory descriptor it ends in and the last name inside it (or no
 * name when the path ends at that directory itself). Reads go through these, never through `hostPath`.
 */
export interface HeldPath {
  at: RootPath;
  dirFd: number;
  name?: string;
  close(): Promise<void>;
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
  // dirs[i] holds done[0..i-1]: dirs[0] is the root.
  // The root itself is configuration, trusted as written (it may be a symlink).
  let rootDir: number;
  try {
    rootDir = openSync(root, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch {
    const at = { path: path, hostPath: hostPathOf(root, path), links, climbed, problem: "unreadable" as const };
    return { at, dirFd: -1, close: async () => {} };
  }
  const dirs: number[] = [rootDir];
  const top = () => dirs[dirs.length - 1] as number;
  const closeFrom = (keep: number) => {
    for (const d of dirs.splice(keep)) closeSync(d);
  };
  const held = (problem?: RootPath["problem"]): HeldPath => {
    const inside = `/${[...done, ...(problem ? todo : [])].join("/")}`;
    const at = { path: inside, hostPath: hostPathOf(root, inside), links, climbed, ...(problem ? { problem } : {}) };
    // Each directory gone through is open; a last component is not (it is read by the caller, by name).
    const ends = dirs.length === done.length + 1;
    return {
      at,
      dirFd: top(),
      ...(ends ? {} : { name: done[done.length - 1] }),
      close: async () => closeFrom(0),
    };
  };
  const lost = (part: string, err: unknown): HeldPath => {
    todo.unshift(part);
    const code = (err as NodeJS.ErrnoException).code;
    return held(code === "ENOENT" ? "missing" : code === "ENOTDIR" ? "not_a_directory" : "unreadable");
  };
  while (todo.length > 0) {
    const part = todo.shift() as string;
    if (part === "..") {
      if (done.length === 0) climbed = true;
      else {
        closeFrom(dirs.length - 1);
        done.pop();
      }
      continue;
    }
    const here = fdPath(top(), part);
    let st: ReturnType<typeof lstatSync>;
    try {
      // A missing name is the common answer here (no resolved, no networkd): no exception built for it.
      st = lstatSync(here, { throwIfNoEntry: false });
    } catch (err) {
      return lost(part, err);
    }
    if (!st) return lost(part, { code: "ENOENT" });
    if (st.isSymbolicLink()) {
      if (links.length >= maxHops) {
        todo.unshift(part);
        return held("loop");
      }
      let target: string;
      try {
        target = readlinkSync(here);
      } catch {
        // Listed but not readable as a link (EACCES on /proc/<pid>/root and the like).
        todo.unshift(part);
        return held("unreadable");
      }
      links.push({ link: `/${[...done, part].join("/")}`, target });
      if (target.startsWith("/")) {
        done = [];
        closeFrom(1);
      }
      todo = [...parts(target), ...todo];
      continue;
    }
    done.push(part);
    if (todo.length === 0) break;
    if (!st.isDirectory()) return held("not_a_directory");
    try {
      dirs.push(openSync(here, DIR_NOFOLLOW));
    } catch (err) {
      done.pop();
      return lost(part, err);
    }
  }
  return held();
}

/** The root must be a directory we can read; anything else cannot be diagnosed here. */
export async function assertRoot(root: string): Promise<void> {
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
