/**
 * Paths inside a filesystem root, resolved the way a chroot would: every symlink is followed by us, component by
 * component, an absolute target restarts at the root and `..` never climbs above it. Nothing outside the root
 * is ever opened, whatever the links say.
 */
import { lstat, readlink, stat } from "node:fs/promises";
import { join } from "node:path";
import { DiagError } from "@roadnerd/conventions";

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

/** Follow `path` (absolute, inside the root) to what it names, never leaving `root`. */
export async function resolveInRoot(root: string, path: string, maxHops = MAX_SYMLINK_HOPS): Promise<RootPath> {
  let todo = parts(path);
  let done: string[] = [];
  const links: RootPath["links"] = [];
  let climbed = false;
  const result = (problem?: RootPath["problem"]): RootPath => {
    const inside = `/${[...done, ...(problem ? todo : [])].join("/")}`;
    return { path: inside, hostPath: hostPathOf(root, inside), links, climbed, ...(problem ? { problem } : {}) };
  };
  while (todo.length > 0) {
    const part = todo.shift() as string;
    if (part === "..") {
      if (done.length === 0) climbed = true;
      else done.pop();
      continue;
    }
    const here = `/${[...done, part].join("/")}`;
    let st: Awaited<ReturnType<typeof lstat>>;
    try {
      st = await lstat(hostPathOf(root, here));
    } catch (err) {
      todo.unshift(part);
      const code = (err as NodeJS.ErrnoException).code;
      return result(code === "ENOENT" ? "missing" : code === "ENOTDIR" ? "not_a_directory" : "unreadable");
    }
    if (st.isSymbolicLink()) {
      if (links.length >= maxHops) {
        todo.unshift(part);
        return result("loop");
      }
      let target: string;
      try {
        target = await readlink(hostPathOf(root, here));
      } catch {
        // Listed but not readable as a link (EACCES on /proc/<pid>/root and the like).
        todo.unshift(part);
        return result("unreadable");
      }
      links.push({ link: here, target });
      if (target.startsWith("/")) done = [];
      todo = [...parts(target), ...todo];
      continue;
    }
    done.push(part);
    if (todo.length > 0 && !st.isDirectory()) return result("not_a_directory");
  }
  return result();
}

/** The root must be a directory we can read; anything else cannot be diagnosed here. */
export async function assertRoot(root: string): Promise<void> {
  const st = await stat(root).catch(() => undefined);
  if (!st?.isDirectory()) {
    throw new DiagError("E_UNSUPPORTED", `DNS_CONFIG_ROOT ${root} is not a readable directory`, {
      hint: "set DNS_CONFIG_ROOT to a mounted filesystem root, or leave it unset for /",
    });
  }
}
