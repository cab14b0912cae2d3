/**
 * The walker's own guards, on a real tree: mount points it must never touch (network/FUSE, given in `avoid`)
 * are neither lstat'ed nor counted, an aborted walk answers at once, and a walk with many directories (where
 * the async lanes share the work) adds up to du's total exactly.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { walk } from "../../src/walk/walker.ts";
import { du } from "../helpers/scratch-mounts.ts";
import { dirs, file, MIB, manyFiles, parseDu } from "../helpers/trees.ts";

const base = mkdtempSync(join(tmpdir(), "rn-storage-walk-"));
dirs(base, "keep", "remote/deep");
file(join(base, "keep/a"), MIB);
file(join(base, "remote/deep/b"), 2 * MIB);
manyFiles(join(base, "wide"), 300, 5);
afterAll(() => rmSync(base, { recursive: true, force: true }));

const options = (extra: Partial<Parameters<typeof walk>[0]> = {}) => ({
  root: base,
  depth: 1,
  n: 10,
  oneFilesystem: true,
  deadline: performance.now() + 60_000,
  signal: new AbortController().signal,
  avoid: new Set<string>(),
  ...extra,
});

describe("walk", () => {
  it("never enters or counts a mount point in `avoid`", async () => {
    const r = await walk(options({ avoid: new Set([join(base, "remote")]) }));
    expect(r.skipped.network_fs).toBe(1);
    expect(r.entries.map((e) => e.name)).not.toContain("remote");
    const all = await walk(options());
    expect(all.bytes - r.bytes).toBeGreaterThanOrEqual(2 * MIB);
  });

  it("answers at once, truncated, when already aborted", async () => {
    const aborted = new AbortController();
    aborted.abort();
    const r = await walk(options({ signal: aborted.signal }));
    expect(r).toMatchObject({ stopped: "cancelled", truncated: true, dirs: 0, files: 0 });
  });

  it("adds up to du -sx exactly with the lanes sharing 300 directories", async () => {
    const r = await walk(options());
    const [[bytes]] = parseDu(du(["-sx", "-B1", base])) as [[number, string]];
    expect(r.bytes).toBe(bytes);
    expect(r.dirs).toBe(1 + 3 + 1 + 300);
    expect(r.files).toBe(2 + 1500);
    expect(r.stopped).toBe("done");
  });
});
