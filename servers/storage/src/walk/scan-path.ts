/**
 * Which path top_consumers may walk: an absolute path whose real location (symlinks resolved) is inside a
 * configured root's real location, and never in /proc, /sys or /dev. Checked twice: on the path as written
 * (so `/tmp/../etc` and out-of-root names are refused before the filesystem is touched, and a refusal says
 * nothing about what exists there), then on its realpath (so a symlink inside a root cannot lead out), and
 * last on the directory actually opened (so a swap between the two checks and the walk cannot lead out).
 */
import { open, readlink, realpath, stat } from "node:fs/promises";
import { isAbsolute, resolve, sep } from "node:path";
import { DIR_NOFOLLOW, DiagError, fdPath } from "@roadnerd/conventions";

const errCode = (err: unknown) => (err as NodeJS.ErrnoException).code;

/** Never walked, whatever STORAGE_ROOTS says: kernel interfaces and device nodes. */
export const NEVER_WALKED = ["/proc", "/sys", "/dev"];

export function isInside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir === sep ? dir : dir + sep);
}

function forbidden(path: string, roots: readonly string[]): DiagError {
  return new DiagError("E_FORBIDDEN", `${path} is outside the directories this server may walk`, {
    hint: `allowed roots (STORAGE_ROOTS): ${roots.join(":")}`,
  });
}

/**
 * A path inside a root whose symlinks lead out: said without naming where (before, `/tmp/x (→ /root/.probe)`
 * told any caller where a link outside the roots pointed, and so what exists there).
 */
function leadsOut(path: string, roots: readonly string[]): DiagError {
  return new DiagError("E_FORBIDDEN", `${path} leads outside the directories this server may walk (a symlink)`, {
    hint: `allowed roots (STORAGE_ROOTS): ${roots.join(":")}`,
  });
}

function check(path: string, roots: readonly string[]): boolean {
  return !NEVER_WALKED.some((n) => isInside(path, n)) && roots.some((r) => isInside(path, r));
}

/** Real paths of the roots that exist (a root that is a symlink counts as where it points). */
export async function realRoots(roots: readonly string[]): Promise<string[]> {
  const out = await Promise.all(roots.map((r) => realpath(r).catch(() => undefined)));
  return [...new Set(out.filter((r): r is string => r !== undefined))];
}

/** The real, allowed directory to walk, or E_INVALID_INPUT / E_FORBIDDEN. */
export async function resolveScanPath(input: string, roots: readonly string[]): Promise<ScanRoot> {
  if (!isAbsolute(input)) {
    throw new DiagError("E_INVALID_INPUT", `path must be absolute: ${JSON.stringify(input)}`);
  }
  const lexical = resolve(input);
  const real = await realRoots(roots);
  // Written roots too: /var/run → /run is allowed by "/var" as written only if its target is also inside.
  if (!check(lexical, [...roots.map((r) => resolve(r)), ...real])) throw forbidden(input, roots);
  let target: string;
  try {
    target = await realpath(lexical);
  } catch (err) {
    const code = errCode(err);
    if (code === "ENOENT" || code === "ENOTDIR") throw new DiagError("E_INVALID_INPUT", `no such directory: ${input}`);
    if (code === "EACCES") throw new DiagError("E_FORBIDDEN", `permission denied: ${input}`);
    throw new DiagError("E_INVALID_INPUT", `cannot resolve ${input}: ${code ?? (err as Error).message}`);
  }
  if (!check(target, real)) throw leadsOut(input, roots);
  const st = await stat(target);
  if (!st.isDirectory()) throw new DiagError("E_INVALID_INPUT", `not a directory: ${input}`);
  return await openedRoot(input, target, roots, real);
}

export interface ScanRoot {
  path: string;
  /** The directory checked: the walk refuses to start anywhere else. */
  dev: number;
  ino: number;
}

/**
 * The check that counts: open the directory (no symlink as its last component), ask the kernel where the
 * descriptor really is, and check that. A component swapped for a symlink after realpath lands outside and
 * is refused here; the walk then opens only this device and inode.
 */
async function openedRoot(input: string, target: string, roots: readonly string[], real: string[]): Promise<ScanRoot> {
  let dir: Awaited<ReturnType<typeof open>>;
  try {
    dir = await open(target, DIR_NOFOLLOW);
  } catch (err) {
    throw new DiagError("E_INVALID_INPUT", `${input} changed while it was checked (${errCode(err) ?? "unreadable"})`);
  }
  try {
    const where = await readlink(fdPath(dir.fd));
    if (!check(where, real)) throw leadsOut(input, roots);
    const st = await dir.stat();
    return { path: where, dev: st.dev, ino: st.ino };
  } finally {
    await dir.close();
  }
}
