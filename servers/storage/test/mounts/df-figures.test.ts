/** df's arithmetic on statfs figures: rounding of GiB and of percents, the root reserve, empty filesystems. */
import { describe, expect, it } from "vitest";
import { ceilPct, dfFigures, toGiB } from "../../src/mounts/df-figures.ts";

describe("dfFigures", () => {
  it("computes df's Use% from used / (used + available), rounded up", () => {
    // This VM's / at one moment (df: 23%): blocks, bfree, bavail as statfs gave them.
    const s = {
      bsize: 4096n,
      blocks: 66053021n,
      bfree: 60036993n,
      bavail: 20581688n,
      files: 16777216n,
      ffree: 16316891n,
    };
    const f = dfFigures(s);
    expect(f.used_pct).toBe(Math.ceil((100 * (66053021 - 60036993)) / (66053021 - 60036993 + 20581688)));
    expect(f.used_pct).toBe(23);
    expect(f.total_gb).toBe(251.972);
    expect(f.available_gb).toBe(78.513);
    expect(f.inodes_used).toBe(460325);
    expect(f.inodes_used_pct).toBe(3);
  });

  it("rounds a percent up as df does, and says null where df prints '-'", () => {
    expect(ceilPct(1n, 1000n)).toBe(1);
    expect(ceilPct(0n, 1000n)).toBe(0);
    expect(ceilPct(1000n, 1000n)).toBe(100);
    expect(ceilPct(0n, 0n)).toBeNull();
    const empty = dfFigures({ bsize: 4096n, blocks: 0n, bfree: 0n, bavail: 0n, files: 0n, ffree: 0n });
    expect(empty).toMatchObject({ used_pct: null, inodes_used_pct: null, total_gb: 0 });
  });

  it("rounds GiB half up to 3 decimals, exactly", () => {
    expect(toGiB(1024n ** 3n)).toBe(1);
    expect(toGiB(536_870n)).toBe(0);
    expect(toGiB(536_871n)).toBe(0.001); // 0.0005000003 GiB
    expect(toGiB(2n ** 60n)).toBe(1_073_741_824);
  });
});
