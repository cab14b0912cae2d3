/**
 * Regression (issue 18, finding 3): the artifacts directory, by default in the world-writable temp dir, was
 * used without a check, so a symlink planted at its name made a root-run server write PNGs into the link's
 * target, and on a full disk the partial `.tmp` file stayed and every later snapshot failed. Now a planted
 * link, someone else's directory or a link at the temporary name is refused (nothing written through it),
 * a directory of ours open to others is tightened to 0700, and a full disk leaves nothing behind.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ARTIFACT_NAME, saveArtifact } from "../../src/artifacts/store.ts";

const base = mkdtempSync(join(tmpdir(), "webcheck-unsafe-"));
const mounted: string[] = [];
afterAll(() => {
  for (const m of mounted) execFileSync("umount", ["-l", m]);
  rmSync(base, { recursive: true, force: true });
});

const limits = (dir: string) => ({ dir, maxFiles: 10, maxBytes: 1 << 20 });
const png = Buffer.alloc(64, 1);

describe("the artifacts directory", () => {
  it("a symlink planted at its name is refused: nothing is written into its target", async () => {
    const target = join(base, "victim");
    mkdirSync(target);
    symlinkSync(target, join(base, "planted"));
    await expect(saveArtifact(limits(join(base, "planted")), png)).rejects.toMatchObject({ code: "E_FORBIDDEN" });
    expect(readdirSync(target)).toEqual([]);
  });

  it("a directory someone else made first is refused", async () => {
    const theirs = join(base, "theirs");
    mkdirSync(theirs, { mode: 0o777 });
    chmodSync(theirs, 0o777);
    chownSync(theirs, 65534, 65534);
    await expect(saveArtifact(limits(theirs), png)).rejects.toMatchObject({ code: "E_FORBIDDEN" });
    expect(readdirSync(theirs)).toEqual([]);
  });

  it("one of ours open to others is tightened to 0700 before anything is written", async () => {
    const loose = join(base, "loose");
    mkdirSync(loose);
    chmodSync(loose, 0o777);
    const saved = await saveArtifact(limits(loose), png);
    expect(statSync(loose).mode & 0o777).toBe(0o700);
    expect(statSync(saved.path).mode & 0o777).toBe(0o600);
  });

  it("on a full disk the partial file is removed, and the next snapshot works once there is room", async () => {
    const small = join(base, "small");
    mkdirSync(small, { mode: 0o700 });
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k,mode=700", "tmpfs", small]);
    mounted.push(small);
    await expect(saveArtifact(limits(small), Buffer.alloc(256 * 1024, 1))).rejects.toMatchObject({
      code: "E_UNSUPPORTED",
    });
    expect(readdirSync(small)).toEqual([]);
    const saved = await saveArtifact(limits(small), Buffer.alloc(16 * 1024, 1));
    expect(readdirSync(small).filter((n) => ARTIFACT_NAME.test(n))).toEqual([saved.path.slice(small.length + 1)]);
  });
});
