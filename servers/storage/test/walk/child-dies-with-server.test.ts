/**
 * The walker children die with their server (ADR 0051, 0059): the built server walks /usr (long enough to take
 * them), is SIGKILLed (no exit hook runs), and its children, idle and waiting for the next walk, must be gone
 * within a scaled deadline. Two things end them: setpriv's death signal and their own exit when the channel
 * closes; either is enough, and this checks the outcome, as killed-server.test.ts does for commands.
 */
import { readFileSync } from "node:fs";
import { createClient } from "@roadnerd/client";
import { isLive, pidsWhere } from "@roadnerd/conventions/testing";
import { pollUntil, type SpawnedServer, spawnServer } from "@roadnerd/testkit";
import { afterAll, describe, expect, it } from "vitest";

let srv: SpawnedServer | undefined;
afterAll(async () => {
  await srv?.stop().catch(() => undefined);
});

/** The server's children running the walker program. */
const walkers = (ppid: number) =>
  pidsWhere("status", (s) => new RegExp(`^PPid:\\s+${ppid}$`, "m").test(s)).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("walkChildMain");
    } catch {
      return false;
    }
  });

describe("the walker children of a SIGKILLed server", () => {
  it("are gone once it is", async () => {
    srv = await spawnServer("storage", { env: { STORAGE_ROOTS: "/usr" } });
    const pid = srv.pid;
    await createClient(srv.url).call("top_consumers", { path: "/usr", n: 5, timeout_ms: 15_000 });
    const children = walkers(pid);
    expect(children.length, "the walk of /usr took no walker child").toBeGreaterThan(0);
    process.kill(pid, "SIGKILL");
    expect(await pollUntil(() => children.every((c) => !isLive(c)), 20_000)).toBe(true);
  });
});
