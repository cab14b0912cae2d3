/**
 * One row per filesystem: bind mounts (and other mounts of the same device) are the same space, so they are
 * shown once. The row kept is the first mount of the filesystem's own root, else the shortest mount path
 * (as df keeps); the others are listed in its `also_at`.
 */
import type { MountEntry } from "./mountinfo.ts";

export interface MountGroup {
  primary: MountEntry;
  others: MountEntry[];
}

function better(a: MountEntry, b: MountEntry): boolean {
  if ((a.root === "/") !== (b.root === "/")) return a.root === "/";
  // Two mounts of the whole filesystem: the first one mounted is the original, the later one the bind.
  if (a.root === "/") return false;
  return a.mount.length < b.mount.length;
}

export function groupByDevice(entries: readonly MountEntry[]): MountGroup[] {
  const groups = new Map<string, MountGroup>();
  for (const e of entries) {
    const g = groups.get(e.device);
    if (!g) {
      groups.set(e.device, { primary: e, others: [] });
    } else if (better(e, g.primary)) {
      g.others.push(g.primary);
      g.primary = e;
    } else {
      g.others.push(e);
    }
  }
  return [...groups.values()];
}
