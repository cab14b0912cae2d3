/** Containment checks of scan paths, on the path as written and on its realpath. */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isInside, realRoots, resolveScanPath } from "../../src/walk/scan-path.ts";

const base = mkdtempSync(join(tmpdir(), "rn-storage-path-"));
mkdirSync(join(base, "root/a"), { recursive: true });
mkdirSync(join(base, "rootx"));
symlinkSync(join(base, "root"), join(base, "root-link"));
symlinkSync(join(base, "root/a"), join(base, "root/inner-link"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe("isInside", () => {
  it("compares whole path components", () => {
    expect(isInside("/var/log", "/var")).toBe(true);
    expect(isInside("/var", "/var")).toBe(true);
    expect(isInside("/variable", "/var")).toBe(false);
    expect(isInside("/etc", "/")).toBe(true);
  });
});

describe("resolveScanPath", () => {
  const roots = [join(base, "root")];
  it("resolves a link that stays inside a root to its real path", async () => {
    await expect(resolveScanPath(join(base, "root/inner-link"), roots)).resolves.toMatchObject({
      path: join(base, "root/a"),
    });
  });
  it("takes a root that is a symlink as where it points", async () => {
    expect(await realRoots([join(base, "root-link"), "/no/such/root"])).toEqual([join(base, "root")]);
    await expect(resolveScanPath(join(base, "root-link/a"), [join(base, "root-link")])).resolves.toMatchObject({
      path: join(base, "root/a"),
    });
  });
  // Regression (attacker review): the refusal named the link's target outside the roots (`… (→ /root/.probe)`).
  it("refuses a link that leads out without naming where it leads", async () => {
    const outside = mkdtempSync(join(tmpdir(), "rn-storage-secret-place-"));
    symlinkSync(outside, join(base, "root/out-link"));
    try {
      const err = await resolveScanPath(join(base, "root/out-link"), roots).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: "E_FORBIDDEN", message: expect.stringContaining("leads outside") });
      expect(JSON.stringify(err)).not.toContain("rn-storage-secret-place");
      expect((err as Error).message).not.toContain("rn-storage-secret-place");
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
  it("refuses a sibling whose name starts like the root", async () => {
    await expect(resolveScanPath(join(base, "rootx"), roots)).rejects.toMatchObject({ code: "E_FORBIDDEN" });
  });
});
