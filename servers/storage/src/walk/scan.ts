/**
 * One scan, shared by the top_consumers tool and its progress stream: check the path against the roots, learn
 * the network mounts from the mount table, walk, and shape the answer (sizes in MiB, 2 decimals, half-up).
 */
import { DiagError } from "@roadnerd/conventions";
import { z } from "zod";
import { isNetworkFs } from "../mounts/fs-kinds.ts";
import { readMountinfo, visibleMounts } from "../mounts/mountinfo.ts";
import { isInside, resolveScanPath } from "./scan-path.ts";
import { type WalkProgress, walk } from "./walker.ts";

export const DEFAULT_DEPTH = 2;
/** Every directory down to depth is kept until the end (its size is final only then): 5 bounds the memory. */
export const MAX_DEPTH = 5;
export const DEFAULT_N = 10;
export const MAX_N = 100;

export const scanInput = {
  path: z.string().min(1).describe("absolute directory to look into, inside STORAGE_ROOTS (e.g. /var/log, /home)"),
  depth: z
    .number()
    .int()
    .min(1)
    .max(MAX_DEPTH)
    .optional()
    .describe(`list entries down to this many levels below path (default ${DEFAULT_DEPTH}), like du -d`),
  n: z.number().int().min(1).max(MAX_N).optional().describe(`how many of the biggest entries (default ${DEFAULT_N})`),
  one_filesystem: z
    .boolean()
    .optional()
    .describe("stay on path's filesystem, like du -x (default true); network mounts are never entered"),
};

export type ScanInput = {
  path: string;
  depth?: number | undefined;
  n?: number | undefined;
  one_filesystem?: boolean | undefined;
};

const MIB = 1024 * 1024;
/** bytes → MiB, half-up to 2 decimals. */
export const toMiB = (bytes: number) => Math.round((bytes * 100) / MIB) / 100;

export const scanOutput = {
  path: z.string().describe("the directory walked (symlinks resolved)"),
  entries: z
    .array(
      z.object({
        name: z.string().describe("path below `path` (log/journal)"),
        type: z.enum(["dir", "file"]).describe("dir (its whole subtree) or file"),
        size_mb: z.number().describe("allocated size in MiB like du (blocks × 512)"),
        apparent_mb: z.number().describe("apparent size in MiB (file lengths, like du --apparent-size)"),
      }),
    )
    .describe("the biggest directories and files down to depth, biggest first (a directory and its child both appear)"),
  total_mb: z.number().describe("allocated MiB of everything under path (du -sx)"),
  apparent_total_mb: z.number().describe("apparent MiB of everything under path"),
  scanned: z
    .object({
      dirs: z.number().int().describe("directories read"),
      files: z.number().int().describe("other entries counted (files, symlinks…; hard links once)"),
      bytes: z.number().int().describe("allocated bytes counted"),
    })
    .describe("how far the walk got"),
  skipped: z
    .object({
      unreadable: z
        .number()
        .int()
        .describe("directories (or entries) that could not be read for lack of permission: not counted"),
      other_fs: z.number().int().describe("entries on another filesystem, not entered (one_filesystem)"),
      network_fs: z.number().int().describe("network/FUSE mount points, never entered"),
      vanished: z.number().int().describe("entries deleted while walking"),
      too_deep: z
        .number()
        .int()
        .describe("entries whose path is longer than the kernel's PATH_MAX (4096): not counted, truncated is true"),
    })
    .describe("what was not counted"),
  truncated: z
    .boolean()
    .describe(
      "true when the walk stopped at timeout_ms before the end, or met paths past PATH_MAX: sizes are lower bounds",
    ),
};

export interface ScanRun {
  /** performance.now() at which to stop. */
  deadline: number;
  signal: AbortSignal;
  roots: readonly string[];
  onProgress?: (p: WalkProgress) => void;
  progressEveryMs?: number;
}

export async function scan(input: ScanInput, run: ScanRun) {
  const root = await resolveScanPath(input.path, run.roots);
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
  const n = input.n ?? DEFAULT_N;
  const depth = input.depth ?? DEFAULT_DEPTH;
  const r = await walk({
    root,
    depth,
    n,
    oneFilesystem: input.one_filesystem ?? true,
    deadline: run.deadline,
    signal: run.signal,
    avoid,
    ...(run.onProgress ? { onProgress: run.onProgress } : {}),
    ...(run.progressEveryMs ? { progressEveryMs: run.progressEveryMs } : {}),
  });
  return {
    path: root,
    entries: r.entries.map((e) => ({
      name: e.name,
      type: e.type,
      size_mb: toMiB(e.bytes),
      apparent_mb: toMiB(e.apparent),
    })),
    total_mb: toMiB(r.bytes),
    apparent_total_mb: toMiB(r.apparent),
    scanned: { dirs: r.dirs, files: r.files, bytes: r.bytes },
    skipped: r.skipped,
    truncated: r.truncated,
  };
}
