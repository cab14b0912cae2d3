/**
 * The warm browser is a resource of the runtime: each runtime launches its own Chromium (real, from EXEC_PATH),
 * concurrent first snapshots share one launch, closing a runtime ends its browser's process (by PID) and not
 * another runtime's, and a runtime closed while its browser launches leaves no browser behind.
 */
import { isLive, pidsWhere, testRuntime, thrown } from "@roadnerd/conventions/testing";
import { describe, expect, it } from "vitest";
import { warmBrowser } from "../../src/browser/warm-browser.ts";
import { server } from "../../src/server.ts";

/** Chromium processes that are children of this test process (live: an exited one not reaped yet is not). */
const browserPids = () =>
  pidsWhere("status", (s) => new RegExp(`^PPid:\\s+${process.pid}$`, "m").test(s) && /^Name:\s+chrom/m.test(s)).filter(
    isLive,
  );

/** The browser processes started since `before` was taken. */
const startedSince = (before: readonly number[]) => browserPids().filter((p) => !before.includes(p));

const noPreflight = async () => {};

/** Closing waits at most RESOURCE_CLOSE_MS for the browser: on a loaded machine its process may end just after. */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && isLive(pid); i += 1) await new Promise((r) => setTimeout(r, 100));
  return !isLive(pid);
}

describe("warmBrowser, owned by the runtime", () => {
  it("is one browser per runtime, and closing a runtime ends its browser's process only", async () => {
    const a = testRuntime(server);
    const b = testRuntime(server);
    try {
      const before = browserPids();
      // Two first snapshots at once in runtime a: one launch, one cold lease, one browser.
      const [a1, a2] = await Promise.all([
        a.use(warmBrowser).lease(noPreflight),
        a.use(warmBrowser).lease(noPreflight),
      ]);
      a1.release();
      a2.release();
      expect([a1.cold, a2.cold].sort()).toEqual([false, true]);
      expect(a2.browser).toBe(a1.browser);
      const [pidA] = startedSince(before);
      expect(startedSince(before)).toHaveLength(1);

      const b1 = await b.use(warmBrowser).lease(noPreflight);
      b1.release();
      expect(b1.cold).toBe(true);
      expect(b1.browser).not.toBe(a1.browser);
      const [pidB] = startedSince([...before, pidA ?? 0]);
      expect(startedSince(before)).toHaveLength(2);

      await a.close();
      expect(await gone(pidA ?? 0)).toBe(true);
      expect(isLive(pidB ?? 0)).toBe(true);
      expect(thrown(() => a.use(warmBrowser))).toMatchObject({ code: "E_BUSY" });
      // b still serves from its warm browser.
      const b2 = await b.use(warmBrowser).lease(noPreflight);
      b2.release();
      expect(b2).toMatchObject({ cold: false });
      expect(b2.browser).toBe(b1.browser);

      await b.close();
      expect(await gone(pidB ?? 0)).toBe(true);
      expect(startedSince(before)).toEqual([]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 60_000);

  it("a runtime closed while its browser launches leaves no browser: that launch ends in E_BUSY", async () => {
    const a = testRuntime(server);
    const before = browserPids();
    const leasing = a.use(warmBrowser).lease(noPreflight);
    await a.close();
    await expect(leasing).rejects.toMatchObject({ code: "E_BUSY" });
    expect(startedSince(before)).toEqual([]);
  }, 60_000);

  it("without chromium on EXEC_PATH is E_NO_BINARY, and nothing is kept", () => {
    const a = testRuntime(server, { env: { EXEC_PATH: "/nonexistent" } });
    expect(thrown(() => a.use(warmBrowser))).toMatchObject({ code: "E_NO_BINARY" });
    expect(thrown(() => a.use(warmBrowser))).toMatchObject({ code: "E_NO_BINARY" });
  });
});
