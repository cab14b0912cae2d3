/**
 * disk_usage: every mounted filesystem's space and inodes from statfs(2) over /proc/self/mountinfo, figured
 * exactly as df does, fullest first, with a `full` verdict (≥ 95 % space or inodes on a writable mount).
 * No program is run.
 */
import { type BigIntStatsFs, statfsSync } from "node:fs";
import { capList, DiagError, limitInput, truncationFields } from "@roadnerd/conventions";
import { z } from "zod";
import { defineTool } from "../kit.ts";
import { groupByDevice } from "../mounts/dedupe.ts";
import { dfFigures } from "../mounts/df-figures.ts";
import { isLocalFs, isPseudoFs } from "../mounts/fs-kinds.ts";
import { type MountEntry, readMountinfo, visibleMounts } from "../mounts/mountinfo.ts";
import { statfsCalls, withDeadline } from "../mounts/statfs-once.ts";

/** A mount at or above this percent of space or inodes is in `full`. */
export const FULL_PCT = 95;

const mountRow = z.object({
  mount: z.string().describe("mount point"),
  fs: z.string().describe("filesystem type (ext4, xfs, btrfs, tmpfs, overlay…)"),
  source: z.string().describe("device or source (/dev/sda2, tmpfs, server:/export)"),
  read_only: z.boolean().describe("mounted read-only"),
  total_gb: z.number().describe("size in GiB (df's 1K-blocks / 2^20), 3 decimals"),
  used_gb: z.number().describe("used GiB: blocks − free blocks, as df"),
  available_gb: z.number().describe("GiB a non-root user can still write (bavail; root also has the reserve)"),
  used_pct: z.number().int().nullable().describe("df's Use%: ⌈used / (used + available)⌉; null for a 0-block fs"),
  inodes_total: z.number().int().describe("inodes (files) the filesystem can hold; 0 = no fixed table"),
  inodes_used: z.number().int().describe("inodes in use"),
  inodes_free: z.number().int().describe("inodes still free"),
  inodes_used_pct: z.number().int().nullable().describe("df -i's IUse%; null when there is no fixed inode table"),
  also_at: z.array(z.string()).describe("other mount points of the same filesystem (bind mounts)"),
});

type MountRow = z.infer<typeof mountRow>;

const fullRow = z.object({
  mount: z.string().describe("mount point"),
  by: z.enum(["space", "inodes", "both"]).describe("what ran out: space, inodes or both"),
});

function fullBy(r: MountRow): "space" | "inodes" | "both" | undefined {
  if (r.read_only) return undefined;
  const space = (r.used_pct ?? 0) >= FULL_PCT;
  const inodes = (r.inodes_used_pct ?? 0) >= FULL_PCT;
  return space && inodes ? "both" : space ? "space" : inodes ? "inodes" : undefined;
}

const fullness = (r: MountRow) => Math.max(r.used_pct ?? -1, r.inodes_used_pct ?? -1);

export const diskUsage = defineTool({
  name: "disk_usage",
  summary: "Space and inodes of every disk (like df); which are ≥95% full.",
  input: {
    include_pseudo: z
      .boolean()
      .optional()
      .describe("also list kernel pseudo filesystems (proc, sysfs, cgroup…) and read-only images (default false)"),
    limit: limitInput,
  },
  output: {
    mounts: z.array(mountRow).describe("one row per filesystem, fullest first"),
    full: z.array(fullRow).describe(`writable mounts at ≥ ${FULL_PCT}% space or inodes`),
    unanswered: z
      .array(z.object({ mount: z.string(), fs: z.string(), error: z.string() }))
      .describe("mounts whose statfs failed or did not answer in time (a stalled network mount)"),
    hidden: z.number().int().describe("pseudo filesystems, images and 0-block mounts left out"),
    ...truncationFields,
  },
  example: {},
  view: (r) => ({
    full: r.full.map((f) => `${f.mount} (${f.by})`),
    fullest: r.mounts.slice(0, 3).map((m) => `${m.mount} ${m.used_pct ?? 0}%`),
    unanswered: r.unanswered.length || undefined,
  }),
  summarize: (r) => {
    const worst = r.mounts[0];
    const full = r.full.map((f) => `${f.mount} (${f.by})`).join(", ");
    if (full) return `FULL: ${full}; ${r.mounts.length} filesystems`;
    if (!worst) return "no filesystems found";
    return `none full; fullest ${worst.mount} at ${worst.used_pct ?? 0}% space, ${worst.inodes_used_pct ?? 0}% inodes`;
  },
  async handler(input, ctx) {
    let entries: MountEntry[];
    try {
      entries = visibleMounts(await readMountinfo());
    } catch (err) {
      throw new DiagError("E_UNSUPPORTED", `cannot read the mount table: ${(err as Error).message}`, { cause: err });
    }
    const includePseudo = input.include_pseudo === true;
    let hidden = 0;
    const shown = entries.filter((e) => {
      const keep = includePseudo || !isPseudoFs(e.fs);
      if (!keep) hidden += 1;
      return keep;
    });
    const unanswered: Array<{ mount: string; fs: string; error: string }> = [];
    const calls = ctx.use(statfsCalls);
    const rows = await Promise.all(
      groupByDevice(shown).map(async ({ primary, others }): Promise<MountRow | undefined> => {
        let s: BigIntStatsFs | "timeout";
        try {
          s = isLocalFs(primary.fs)
            ? statfsSync(primary.mount, { bigint: true })
            : await withDeadline(calls.statfs(primary.mount), ctx.budget(), ctx.signal);
        } catch (err) {
          unanswered.push({ mount: primary.mount, fs: primary.fs, error: (err as { code?: string }).code ?? "EIO" });
          return undefined;
        }
        if (s === "timeout") {
          unanswered.push({ mount: primary.mount, fs: primary.fs, error: "E_TIMEOUT" });
          return undefined;
        }
        // A filesystem with no blocks (an empty pseudo one) has nothing to fill; df hides these without -a.
        if (s.blocks === 0n && !includePseudo) {
          hidden += 1 + others.length;
          return undefined;
        }
        return {
          mount: primary.mount,
          fs: primary.fs,
          source: primary.source,
          read_only: primary.readOnly,
          ...dfFigures(s),
          also_at: others.map((o) => o.mount),
        };
      }),
    );
    const mounts = rows
      .filter((r): r is MountRow => r !== undefined)
      .sort((a, b) => fullness(b) - fullness(a) || a.mount.localeCompare(b.mount));
    const full = mounts.flatMap((r) => {
      const by = fullBy(r);
      return by ? [{ mount: r.mount, by }] : [];
    });
    const capped = capList(mounts, input.limit);
    unanswered.sort((a, b) => a.mount.localeCompare(b.mount));
    return { mounts: capped.items, full, unanswered, hidden, truncated: capped.omitted > 0, omitted: capped.omitted };
  },
});
