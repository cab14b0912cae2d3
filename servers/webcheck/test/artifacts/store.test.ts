/** The artifacts directory keeps at most a count and a size of our own files, the oldest deleted first. */
import { mkdtemp, readdir, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ARTIFACT_NAME, saveArtifact } from "../../src/artifacts/store.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "webcheck-store-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const ours = async () => (await readdir(dir)).filter((n) => ARTIFACT_NAME.test(n)).sort();

/** Save, then backdate the file so the order of saves is the order of mtimes whatever the clock's resolution. */
async function saveAged(limits: Parameters<typeof saveArtifact>[0], size: number, ageS: number) {
  const saved = await saveArtifact(limits, Buffer.alloc(size, 1));
  const t = new Date(Date.now() - ageS * 1000);
  await utimes(saved.path, t, t).catch(() => undefined);
  return saved;
}

describe("saveArtifact", () => {
  it("writes the file (0600, in a 0700 dir it creates) and reports its size", async () => {
    const nested = join(dir, "a", "b");
    const saved = await saveArtifact({ dir: nested, maxFiles: 5, maxBytes: 1 << 20 }, Buffer.from("png!"));
    expect(saved).toMatchObject({ bytes: 4, evicted: 0 });
    expect(saved.path.startsWith(`${nested}/snapshot-`)).toBe(true);
    expect((await stat(saved.path)).mode & 0o777).toBe(0o600);
    expect((await stat(nested)).mode & 0o777).toBe(0o700);
  });

  it("beyond the count limit the oldest go first", async () => {
    const limits = { dir, maxFiles: 3, maxBytes: 1 << 20 };
    const paths: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const saved = await saveAged(limits, 10, 100 - i * 10);
      paths.push(saved.path);
      expect(saved.evicted).toBe(i < 3 ? 0 : 1);
    }
    expect(await ours()).toEqual(
      paths
        .slice(2)
        .map((p) => p.slice(dir.length + 1))
        .sort(),
    );
  });

  it("beyond the size limit the oldest go first, and the newest stays even when alone too big", async () => {
    const limits = { dir, maxFiles: 100, maxBytes: 250 };
    const a = await saveAged(limits, 100, 30);
    const b = await saveAged(limits, 100, 20);
    const c = await saveAged(limits, 100, 10);
    expect(c.evicted).toBe(1);
    expect(await ours()).toEqual([b.path, c.path].map((p) => p.slice(dir.length + 1)).sort());
    expect(a.path).not.toBe(b.path);
    const big = await saveArtifact(limits, Buffer.alloc(400, 1));
    expect(big.evicted).toBe(2);
    expect(await ours()).toEqual([big.path.slice(dir.length + 1)]);
  });

  it("never counts or deletes files it did not name", async () => {
    await writeFile(join(dir, "notes.txt"), "keep me");
    await writeFile(join(dir, "snapshot-mine.png"), "not ours either");
    for (let i = 0; i < 3; i += 1) await saveAged({ dir, maxFiles: 1, maxBytes: 1 << 20 }, 10, 10 - i);
    expect((await readdir(dir)).sort()).toEqual(expect.arrayContaining(["notes.txt", "snapshot-mine.png"]));
    expect(await ours()).toHaveLength(1);
  });

  it("concurrent saves stay within the limits", async () => {
    const limits = { dir, maxFiles: 4, maxBytes: 1 << 20 };
    await Promise.all(Array.from({ length: 12 }, () => saveArtifact(limits, Buffer.alloc(10, 1))));
    expect(await ours()).toHaveLength(4);
  });
});
