/**
 * A filesystem's figures from statfs(2), computed the way GNU df computes them (coreutils df.c), so they match
 * `df -B1` and `df -i` to the byte and the percent:
 *   total = blocks × bsize; used = (blocks − bfree) × bsize; available = bavail × bsize (what a non-root user
 *   can still write; the difference to bfree is the root reserve);
 *   use% = ⌈100 × used / (used + available)⌉, inode use% = ⌈100 × iused / (iused + ffree)⌉, iused = files − ffree.
 * Sizes are GiB (2^30 bytes) rounded half-up to 3 decimals; percents are integers, null where df prints "-".
 */
import type { BigIntStatsFs } from "node:fs";

export interface DfFigures {
  total_gb: number;
  used_gb: number;
  available_gb: number;
  used_pct: number | null;
  inodes_total: number;
  inodes_used: number;
  inodes_free: number;
  inodes_used_pct: number | null;
}

const GIB = 1024n ** 3n;

/** bytes → GiB, half-up to 3 decimals, exactly (no float error before the last step). */
export function toGiB(bytes: bigint): number {
  return Number((bytes * 1000n + GIB / 2n) / GIB) / 1000;
}

/** ⌈100 × part / whole⌉ as df rounds it; null when whole is 0. */
export function ceilPct(part: bigint, whole: bigint): number | null {
  if (whole <= 0n) return null;
  return Number((part * 100n + whole - 1n) / whole);
}

export function dfFigures(
  s: Pick<BigIntStatsFs, "bsize" | "blocks" | "bfree" | "bavail" | "files" | "ffree">,
): DfFigures {
  const usedBlocks = s.blocks - s.bfree;
  const used = usedBlocks * s.bsize;
  const available = s.bavail * s.bsize;
  const iused = s.files > s.ffree ? s.files - s.ffree : 0n;
  return {
    total_gb: toGiB(s.blocks * s.bsize),
    used_gb: toGiB(used),
    available_gb: toGiB(available),
    used_pct: ceilPct(usedBlocks, usedBlocks + s.bavail),
    inodes_total: Number(s.files),
    inodes_used: Number(iused),
    inodes_free: Number(s.ffree),
    inodes_used_pct: s.files > 0n ? ceilPct(iused, iused + s.ffree) : null,
  };
}
