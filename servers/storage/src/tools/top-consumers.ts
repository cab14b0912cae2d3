/**
 * top_consumers: what takes the space under a directory, like `du -x -d N | sort -h | tail`, bounded by
 * timeout_ms (it answers with what it found, truncated: true). Only inside STORAGE_ROOTS; never follows a
 * symlink. Over GET /sse/top_consumers the walk also reports how far it got (`progress` events: directories,
 * files and bytes so far) before the result. The walking is walk/'s; this file is the contract and the shape.
 */
import { z } from "zod";
import { defineTool } from "../kit.ts";
import { scan } from "../walk/scan.ts";

export const DEFAULT_DEPTH = 2;
/** Every directory down to depth is kept until the end (its size is final only then): 5 bounds the memory. */
export const MAX_DEPTH = 5;
export const DEFAULT_N = 10;
export const MAX_N = 100;
/** Time kept after the walk to shape and send the answer (generous: a loaded machine delays timers). */
const ANSWER_MARGIN_MS = 200;
/** Between two progress reports (only an /sse/top_consumers caller receives them). */
const PROGRESS_EVERY_MS = 250;

const MIB = 1024 * 1024;
/** bytes → MiB, half-up to 2 decimals. */
export const toMiB = (bytes: number) => Math.round((bytes * 100) / MIB) / 100;

export const topConsumers = defineTool({
  name: "top_consumers",
  summary: "Biggest directories and files under a path (like du -x -d 2).",
  input: {
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
  },
  output: {
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
      .describe(
        "the biggest directories and files down to depth, biggest first (a directory and its child both appear)",
      ),
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
  },
  example: { path: "/var/log", depth: 2, n: 10 },
  view: (r) => ({
    biggest: r.entries.slice(0, 5).map((e) => `${e.name} ${e.size_mb} MiB`),
    truncated: r.truncated || undefined,
    unreadable: r.skipped.unreadable || undefined,
  }),
  summarize: (r) => {
    // The three biggest, none inside another one shown: `node_modules 248 MiB, node_modules/.pnpm 248 MiB`
    // read as space counted twice (the entries keep both, with their names saying which is inside which).
    const inside = (a: string, b: string) => a.startsWith(`${b}/`);
    const shown: typeof r.entries = [];
    for (const e of r.entries) {
      if (shown.length === 3) break;
      if (!shown.some((s) => inside(e.name, s.name) || inside(s.name, e.name))) shown.push(e);
    }
    const top = shown.map((e) => `${e.name} ${e.size_mb} MiB`).join(", ");
    const partial = r.truncated ? " (partial: timed out)" : "";
    return `${r.path}: ${r.total_mb} MiB${partial}; biggest ${top || "none"}`;
  },
  async handler(input, ctx) {
    const r = await scan({
      path: input.path,
      roots: ctx.config.STORAGE_ROOTS,
      depth: input.depth ?? DEFAULT_DEPTH,
      n: input.n ?? DEFAULT_N,
      oneFilesystem: input.one_filesystem ?? true,
      deadline: performance.now() + Math.max(1, ctx.budget() - ANSWER_MARGIN_MS),
      signal: ctx.signal,
      progressEveryMs: PROGRESS_EVERY_MS,
      onProgress: (p) => ctx.progress({ dirs: p.dirs, files: p.files, bytes: p.bytes }),
    });
    return {
      path: r.root,
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
  },
});
