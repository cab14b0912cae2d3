/**
 * disk_usage against real mounts made here (root): tmpfs of known size and inode count at a path with a space
 * (mountinfo's \040), a loop-mounted ext4 image (root reserve: available < free), bind mounts, a read-only
 * remount. Each row is checked against a direct statfs and against `df -B1 --output` on the same mount.
 */
import { writeFileSync } from "node:fs";
import { statfs } from "node:fs/promises";
import { join } from "node:path";
import { callTool } from "@roadnerd/conventions/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { server } from "../../src/server.ts";
import { diskUsage } from "../../src/tools/disk-usage.ts";
import { dfRow, type ScratchMounts, scratchMounts } from "../helpers/scratch-mounts.ts";

const MIB = 1024 * 1024;
const GIB = 1024n ** 3n;
const gib = (b: bigint) => Number((b * 1000n + GIB / 2n) / GIB) / 1000;

let m: ScratchMounts;
let spaced: string;
let inodesFull: string;
let spaceFull: string;
let ext4: string;
let bound: string;
let readOnlyFull: string;

beforeAll(() => {
  m = scratchMounts("rn-storage-du-");
  // 64 MiB, 2000 inodes, at a path with a space; 5 files of 7 MiB = 35 MiB used.
  spaced = m.tmpfs(join(m.base, "with space"), "size=64m,nr_inodes=2000");
  for (let i = 0; i < 5; i++) writeFileSync(join(spaced, `f${i}`), Buffer.alloc(7 * MIB, 1));
  // 100 inodes, 97 of them used (the root directory is one): full by inodes, not by space.
  inodesFull = m.tmpfs(join(m.base, "inodes"), "size=8m,nr_inodes=100");
  for (let i = 0; i < 96; i++) writeFileSync(join(inodesFull, `e${i}`), "");
  // 4 MiB filled to the last page: full by space.
  spaceFull = m.tmpfs(join(m.base, "space"), "size=4m");
  writeFileSync(join(spaceFull, "big"), Buffer.alloc(4 * MIB, 1));
  // A full tmpfs remounted read-only: not in `full` (nothing can be written there anyway).
  readOnlyFull = m.tmpfs(join(m.base, "ro"), "size=1m");
  writeFileSync(join(readOnlyFull, "big"), Buffer.alloc(MIB, 1));
  m.remountReadOnly(readOnlyFull);
  ext4 = m.ext4(join(m.base, "ext4"), 32);
  writeFileSync(join(ext4, "data"), Buffer.alloc(3 * MIB, 1));
  bound = m.bind(spaced, join(m.base, "bound"));
});

afterAll(() => m?.cleanup());

async function rows(input: Record<string, unknown> = {}) {
  return callTool(server, diskUsage, { limit: 500, ...input });
}

describe("disk_usage", () => {
  it("reports a tmpfs at a path with a space exactly as statfs and df do", async () => {
    const r = await rows();
    const row = r.mounts.find((x) => x.mount === spaced);
    const s = await statfs(spaced, { bigint: true });
    const df = dfRow(spaced);
    expect(df.target).toBe(spaced);
    expect(row).toEqual({
      mount: spaced,
      fs: "tmpfs",
      source: "tmpfs",
      read_only: false,
      total_gb: gib(s.blocks * s.bsize),
      used_gb: gib((s.blocks - s.bfree) * s.bsize),
      available_gb: gib(s.bavail * s.bsize),
      used_pct: df.pcent,
      inodes_total: 2000,
      inodes_used: 6,
      inodes_free: 1994,
      inodes_used_pct: df.ipcent,
      also_at: [bound],
    });
    // The same figures df prints, to the byte: 64 MiB total, 35 MiB used.
    expect(df.size).toBe(64n * 1024n * 1024n);
    expect(df.used).toBe(35n * 1024n * 1024n);
    expect(row?.total_gb).toBe(gib(df.size));
    expect(row?.used_gb).toBe(gib(df.used));
    expect(row?.available_gb).toBe(gib(df.avail));
    expect(row?.used_pct).toBe(55); // ⌈35/64⌉ = ⌈54.69⌉
    expect(row?.inodes_used).toBe(df.iused);
    expect(row?.inodes_used_pct).toBe(1); // ⌈6/2000⌉
  });

  it("uses df's available (bavail, the root reserve left out) on a loop-mounted ext4", async () => {
    const r = await rows();
    const row = r.mounts.find((x) => x.mount === ext4);
    const df = dfRow(ext4);
    const s = await statfs(ext4, { bigint: true });
    expect(s.bavail).toBeLessThan(s.bfree); // ext4 reserves 5 % for root
    expect(row).toMatchObject({
      fs: "ext4",
      source: expect.stringMatching(/^\/dev\/loop\d+$/),
      total_gb: gib(df.size),
      used_gb: gib(df.used),
      available_gb: gib(df.avail),
      used_pct: df.pcent,
      inodes_total: df.itotal,
      inodes_used: df.iused,
      inodes_free: df.iavail,
      inodes_used_pct: df.ipcent,
    });
  });

  it("lists full mounts by space and by inodes, never a read-only one, and puts them first", async () => {
    const r = await rows();
    const mine = r.full.filter((f) => f.mount.startsWith(m.base));
    expect(mine).toEqual(
      expect.arrayContaining([
        { mount: inodesFull, by: "inodes" },
        { mount: spaceFull, by: "space" },
      ]),
    );
    expect(mine).toHaveLength(2);
    expect(r.mounts.find((x) => x.mount === readOnlyFull)).toMatchObject({ read_only: true, used_pct: 100 });
    expect(r.mounts.find((x) => x.mount === inodesFull)).toMatchObject({ inodes_used: 97, inodes_used_pct: 97 });
    expect(r.mounts.find((x) => x.mount === spaceFull)).toMatchObject({ used_pct: 100, available_gb: 0 });
    // Fullest first: every row after the first full one is no fuller.
    const fullness = r.mounts.map((x) => Math.max(x.used_pct ?? -1, x.inodes_used_pct ?? -1));
    expect([...fullness].sort((a, b) => b - a)).toEqual(fullness);
    expect(r.summary).toMatch(/^FULL: /);
    expect(r.summary).toContain(`${inodesFull} (inodes)`);
  });

  it("shows a bind mount once, on the filesystem's own root", async () => {
    const r = await rows();
    expect(r.mounts.filter((x) => x.mount === bound)).toEqual([]);
    expect(r.mounts.find((x) => x.mount === spaced)?.also_at).toEqual([bound]);
  });

  it("hides pseudo filesystems unless asked, and counts them", async () => {
    const plain = await rows();
    expect(plain.mounts.map((x) => x.fs)).not.toContain("proc");
    expect(plain.mounts.map((x) => x.fs)).not.toContain("sysfs");
    expect(plain.hidden).toBeGreaterThan(0);
    const all = await rows({ include_pseudo: true });
    expect(all.mounts.find((x) => x.mount === "/proc")).toMatchObject({ fs: "proc", used_pct: null });
    expect(all.hidden).toBe(0);
  });

  it("caps the list at limit and says so", async () => {
    const r = await rows({ limit: 2 });
    expect(r.mounts).toHaveLength(2);
    expect(r.truncated).toBe(true);
    expect(r.omitted).toBeGreaterThan(0);
  });

  it("refuses bad input with E_INVALID_INPUT", async () => {
    for (const bad of [{ include_pseudo: "yes" }, { limit: 0 }, { limit: 501 }, { path: "/" }, { verbose: true }]) {
      await expect(callTool(server, diskUsage, bad)).rejects.toMatchObject({ code: "E_INVALID_INPUT" });
    }
  });
});
