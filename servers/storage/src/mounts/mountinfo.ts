/**
 * The mount table from /proc/self/mountinfo (proc(5)): one line per mount, as this process sees it. Paths are
 * octal-escaped by the kernel (space \040, tab \011, newline \012, backslash \134) and decoded here.
 */
import { readFileSync } from "node:fs";

export interface MountEntry {
  id: number;
  parent: number;
  /** major:minor of the filesystem (st_dev): two mounts with the same one are the same filesystem. */
  device: string;
  /** The directory of the filesystem this mount shows ("/" unless a bind mount of a subtree). */
  root: string;
  mount: string;
  fs: string;
  source: string;
  readOnly: boolean;
}

export const MOUNTINFO_PATH = "/proc/self/mountinfo";

export function decodeOctal(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_m, oct: string) => String.fromCharCode(Number.parseInt(oct, 8)));
}

export function parseMountinfo(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    const f = line.split(" ");
    // Optional fields (shared:N, master:N…) end at a lone "-"; fs type, source and super options follow.
    const dash = f.indexOf("-", 6);
    if (dash < 0 || f.length < dash + 3) continue;
    const [id, parent, device, root, mount, options] = f;
    const superOptions = f[dash + 3] ?? "";
    if (!id || !parent || !device || !root || !mount || !options) continue;
    out.push({
      id: Number(id),
      parent: Number(parent),
      device,
      root: decodeOctal(root),
      mount: decodeOctal(mount),
      fs: f[dash + 1] ?? "",
      source: decodeOctal(f[dash + 2] ?? ""),
      readOnly: options.split(",").includes("ro") || superOptions.split(",").includes("ro"),
    });
  }
  return out;
}

/** Mounts still visible: a later mount on the same directory hides the earlier one (statfs sees the top one). */
export function visibleMounts(entries: readonly MountEntry[]): MountEntry[] {
  const top = new Map<string, MountEntry>();
  for (const e of entries) {
    top.delete(e.mount);
    top.set(e.mount, e);
  }
  return [...top.values()];
}

/** Synchronous: procfs answers from memory (an await through the thread pool cost more than the read). */
export async function readMountinfo(path = MOUNTINFO_PATH): Promise<MountEntry[]> {
  return parseMountinfo(readFileSync(path, "utf8"));
}
