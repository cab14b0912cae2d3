/**
 * top_consumers: what takes the space under a directory, like `du -x -d N | sort -h | tail`, bounded by
 * timeout_ms (it answers with what it found, truncated: true). Only inside STORAGE_ROOTS; never follows a
 * symlink. Over GET /sse/top_consumers the walk also reports how far it got (`progress` events: directories,
 * files and bytes so far) before the result.
 */
import { defineTool } from "../kit.ts";
import { scan, scanInput, scanOutput } from "../walk/scan.ts";

/** Time kept after the walk to shape and send the answer (generous: a loaded machine delays timers). */
const ANSWER_MARGIN_MS = 200;
/** Between two progress reports (only an /sse/top_consumers caller receives them). */
const PROGRESS_EVERY_MS = 250;

export const topConsumers = defineTool({
  name: "top_consumers",
  summary: "Biggest directories and files under a path (like du -x -d 2), within timeout_ms.",
  input: scanInput,
  output: scanOutput,
  example: { path: "/var/log", depth: 2, n: 10 },
  summarize: (r) => {
    const top = r.entries
      .slice(0, 3)
      .map((e) => `${e.name} ${e.size_mb} MiB`)
      .join(", ");
    const partial = r.truncated ? " (partial: timed out)" : "";
    return `${r.path}: ${r.total_mb} MiB${partial}; biggest ${top || "none"}`;
  },
  async handler(input, ctx) {
    return scan(input, {
      deadline: performance.now() + Math.max(1, ctx.budget() - ANSWER_MARGIN_MS),
      signal: ctx.signal,
      roots: ctx.config.STORAGE_ROOTS,
      progressEveryMs: PROGRESS_EVERY_MS,
      onProgress: (p) => ctx.progress({ dirs: p.dirs, files: p.files, bytes: p.bytes }),
    });
  },
});
