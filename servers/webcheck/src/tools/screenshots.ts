/**
 * screenshots: the snapshots saved so far, newest first — where a model finds the file it took a minute ago,
 * and what the artifacts directory holds against its limits. Local files only: no target, no allowlist.
 */
import { capList, DiagError, limitInput, truncationFields } from "@roadnerd/conventions";
import { z } from "zod";
import { listArtifacts } from "../artifacts/store.ts";
import { defineTool } from "../kit.ts";

export const screenshots = defineTool({
  name: "screenshots",
  summary: "The saved snapshot screenshots, newest first: path, size, time.",
  input: { limit: limitInput },
  output: {
    dir: z.string().describe("WEBCHECK_ARTIFACTS_DIR"),
    files: z
      .array(
        z.object({
          path: z.string().describe("PNG file"),
          bytes: z.number().int().describe("size"),
          taken_at: z.string().describe("when it was saved, ISO 8601"),
        }),
      )
      .describe("newest first"),
    count: z.number().int().describe("files kept"),
    total_bytes: z.number().int().describe("their total size"),
    max_files: z.number().int().describe("WEBCHECK_MAX_ARTIFACTS: the oldest go beyond it"),
    max_bytes: z.number().int().describe("WEBCHECK_MAX_ARTIFACTS_MB in bytes"),
    ...truncationFields,
  },
  example: {},
  view: (r) => ({ newest: r.files.slice(0, 3).map((f) => f.path), count: r.count }),
  summarize: (r) =>
    r.count === 0
      ? `no screenshots in ${r.dir}`
      : `${r.count} screenshot(s), ${(r.total_bytes / 1048576).toFixed(1)} MiB in ${r.dir}; newest ${r.files[0]?.path}`,
  async handler(input, ctx) {
    const dir = ctx.config.WEBCHECK_ARTIFACTS_DIR;
    const all = await listArtifacts(dir).catch((err: Error) => {
      throw new DiagError("E_UNSUPPORTED", `cannot read ${dir}: ${err.message}`);
    });
    const newest = [...all].reverse();
    const { items, omitted } = capList(newest, input.limit);
    return {
      dir,
      files: items.map((f) => ({ path: f.path, bytes: f.bytes, taken_at: new Date(f.mtimeMs).toISOString() })),
      count: all.length,
      total_bytes: all.reduce((sum, f) => sum + f.bytes, 0),
      max_files: ctx.config.WEBCHECK_MAX_ARTIFACTS,
      max_bytes: ctx.config.WEBCHECK_MAX_ARTIFACTS_MB * 1048576,
      truncated: omitted > 0,
      omitted,
    };
  },
});
