/**
 * statfs calls, owned by the runtime: concurrent calls for one mount in a runtime share one statfs, another
 * runtime makes its own, and a closed runtime refuses both the resource and new calls (while another
 * runtime's go on). Then disk_usage through a runtime the test keeps, and refused once it is closed.
 */
import { tmpdir } from "node:os";
import { callTool, testRuntime, thrown } from "@roadnerd/conventions/testing";
import { describe, expect, it } from "vitest";
import { statfsCalls } from "../../src/mounts/statfs-once.ts";
import { server } from "../../src/server.ts";
import { diskUsage } from "../../src/tools/disk-usage.ts";

describe("statfsCalls", () => {
  it("is one per runtime: concurrent calls in a runtime share a statfs, another runtime asks for itself", async () => {
    const a = testRuntime(server);
    const b = testRuntime(server);
    try {
      expect(a.use(statfsCalls)).toBe(a.use(statfsCalls));
      expect(a.use(statfsCalls)).not.toBe(b.use(statfsCalls));
      const mount = tmpdir();
      const [a1, a2, b1] = await Promise.all([
        a.use(statfsCalls).statfs(mount),
        a.use(statfsCalls).statfs(mount),
        b.use(statfsCalls).statfs(mount),
      ]);
      // The very same answer object: runtime a asked once for both callers; runtime b asked on its own.
      expect(a1).toBe(a2);
      expect(b1).not.toBe(a1);
      expect(b1.bsize).toBe(a1.bsize);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("closes with its runtime: new calls and the resource refused, another runtime unaffected", async () => {
    const a = testRuntime(server);
    const b = testRuntime(server);
    const callsA = a.use(statfsCalls);
    await a.close();
    await expect(callsA.statfs(tmpdir())).rejects.toMatchObject({ code: "E_BUSY" });
    expect(thrown(() => a.use(statfsCalls))).toMatchObject({ code: "E_BUSY" });
    await expect(callTool(server, diskUsage, {}, { runtime: a })).rejects.toMatchObject({ code: "E_BUSY" });
    expect((await b.use(statfsCalls).statfs(tmpdir())).bsize).toBeGreaterThan(0n);
    const kept = await callTool(server, diskUsage, { include_pseudo: true }, { runtime: b });
    expect(kept.mounts.length).toBeGreaterThan(0);
    await b.close();
  });
});
