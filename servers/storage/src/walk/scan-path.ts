/**
 * Which path top_consumers may walk: an absolute path whose real location (symlinks resolved) is inside a
 * configured root's real location, and never in /proc, /sys or /dev. Checked twice: on the path as written
 * (so `/tmp/../etc` and out-of-root names are refused before the filesystem is touched, and a refusal says
 * nothing about what exists there), then on its realpath (so a symlink inside a root cannot lead out).
 */
import { realpath, stat } from "node:fs/promises";
import { isAbsolute, resolve, sep } from "node:path";
import { DiagError } from "@roadnerd/conventions";

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

function check(path: string, roots: readonly string[]): boolean {
  return !NEVER_WALKED.some((n) => isInside(path, n)) && roots.some((r) => isInside(path, r));
}

/** Real paths of the roots that exist (a root that is a symlink counts as where it points). */
export async function realRoots(roots: readonly string[]): Promise<string[]> {
  const out = await Promise.all(roots.map((r) => realpath(r).catch(() => undefined)));
  return [...new Set(out.filter((r): r is string => r !== undefined))];
}

/** The real, allowed directory to walk, or E_INVALID_INPUT / E_FORBIDDEN. */
export async function resolveScanPath(input: string, roots: readonly string[]): Promise<string> {
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
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") throw new DiagError("E_INVALID_INPUT", `no such directory: ${input}`);
    if (code === "EACCES") throw new DiagError("E_FORBIDDEN", `permission denied: ${input}`);
    throw new DiagError("E_INVALID_INPUT", `cannot resolve ${input}: ${code ?? (err as Error).message}`);
  }
  if (!check(target, real)) throw forbidden(`${input} (→ ${target})`, roots);
  const st = await stat(target);
  if (!st.isDirectory()) throw new DiagError("E_INVALID_INPUT", `not a directory: ${input}`);
  return target;
}
