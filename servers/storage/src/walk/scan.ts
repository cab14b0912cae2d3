/**
 * The walk behind top_consumers: check the path against the roots, learn the network mounts from the mount
 * table (a walk never starts on one, nor enters one), and walk. The tool shapes the answer.
 */
import { DiagError } from "@roadnerd/conventions";
import { isNetworkFs } from "../mounts/fs-kinds.ts";
import { readMountinfo, visibleMounts } from "../mounts/mountinfo.ts";
import { isInside, resolveScanPath } from "./scan-path.ts";
import { type WalkOptions, type WalkResult, walk } from "./walker.ts";

export interface ScanOptions extends Omit<WalkOptions, "root" | "avoid"> {
  /** The directory asked for, as written: its realpath must be inside `roots`. */
  path: string;
  roots: readonly string[];
}

export interface ScanResult extends WalkResult {
  /** The directory walked (symlinks resolved). */
  root: string;
}

export async function scan({ path, roots, ...walkOptions }: ScanOptions): Promise<ScanResult> {
  const { path: root, dev, ino } = await resolveScanPath(path, roots);
  const mounts = visibleMounts(await readMountinfo().catch(() => []));
  const home = mounts.filter((m) => isInside(root, m.mount)).sort((a, b) => b.mount.length - a.mount.length)[0];
  if (home && isNetworkFs(home.fs)) {
    throw new DiagError(
      "E_UNSUPPORTED",
      `${root} is on a ${home.fs} mount (${home.mount}); network filesystems are not walked`,
      {
        hint: "a stalled server would stall the walk; run du on that server instead",
      },
    );
  }
  const avoid = new Set(mounts.filter((m) => isNetworkFs(m.fs) && isInside(m.mount, root)).map((m) => m.mount));
  return { root, ...(await walk({ ...walkOptions, root, rootId: { dev, ino }, avoid })) };
}
