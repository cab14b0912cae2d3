/**
 * GET /sse/top_consumers against the built server: progress events while it walks 100k files, then the
 * result, then end; and a client that leaves early stops the walk (the server's CPU time stops growing).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createClient, type RoadNerdClient } from "@roadnerd/client";
import type { ResultOf } from "@roadnerd/conventions";
import { callTool } from "@roadnerd/conventions/testing";
import { type SpawnedServer, spawnServer } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { server as storage } from "../../src/server.ts";
import { topConsumers } from "../../src/tools/top-consumers.ts";
import { type ScratchMounts, scratchMounts } from "../helpers/scratch-mounts.ts";
import { cutShort, fastest, manyFiles } from "../helpers/trees.ts";

type Result = ResultOf<typeof topConsumers>;
type Progress = { dirs: number; files: number; bytes: number };

let m: ScratchMounts;
let root: string;
let many: string;
let server: SpawnedServer;
let client: RoadNerdClient;

/** utime + stime + cutime + cstime of a process, in clock ticks (/proc/<pid>/stat fields 14–17), and its ppid. */
function statTicks(pid: number): { ticks: number; ppid: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
  return { ticks, ppid: Number(fields[1]) };
}

/**
 * CPU ticks of a server and its live children (the walker children do the walking, ADR 0059; a child that
 * ended counts in its parent's cutime): what a walk costs wherever it runs.
 */
function cpuTicks(pid: number): number {
  let ticks = statTicks(pid).ticks;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const child = statTicks(Number(entry));
      if (child.ppid === pid) ticks += child.ticks;
    } catch {}
  }
  return ticks;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  m = scratchMounts("rn-storage-sse-");
  root = m.tmpfs(join(m.base, "root"), "size=64m,mode=755");
  many = join(root, "many");
  manyFiles(many, 100, 1000);
  server = await spawnServer("storage", { env: { STORAGE_ROOTS: root } });
  client = createClient(server.url);
});

afterAll(async () => {
  await server?.stop();
  m?.cleanup();
});

describe("/sse/top_consumers", () => {
  it("sends progress while it walks, then the result, then end", async () => {
    const events: Array<{ event: string; data: unknown }> = [];
    for await (const e of client.stream("top_consumers", { path: many, n: 3, timeout_ms: 15_000, run_id: "sse-1" })) {
      events.push({ event: e.event, data: e.data });
    }
    const progress = events.filter((e) => e.event === "progress").map((e) => e.data as Progress);
    const messages = events.filter((e) => e.event === "message").map((e) => e.data as Result);
    expect(progress.length).toBeGreaterThan(0);
    // Counts only grow, and every progress event came before the one result.
    const files = progress.map((x) => x.files);
    expect([...files].sort((a, b) => a - b)).toEqual(files);
    expect(files.at(-1)).toBeLessThanOrEqual(100_000);
    expect(messages).toHaveLength(1);
    expect(events.findIndex((e) => e.event === "message")).toBeGreaterThan(
      events.findLastIndex((e) => e.event === "progress"),
    );
    const [result] = messages;
    expect(result).toMatchObject({ path: many, truncated: false, scanned: { files: 100_000, dirs: 101 } });
    expect(result?.entries).toHaveLength(3);
    expect(result?.run_id).toBe("sse-1");
    expect(events.at(-1)).toEqual({ event: "end", data: { reason: "done" } });
    expect(events.some((e) => e.event === "error")).toBe(false);
  });

  it("reports progress to a caller that listens, and answers partially (truncated) at its deadline", async () => {
    // The walk reports right after its first slice, so even a deadline this close sees progress, however
    // slow the machine; the deadline (a quarter of what a whole walk just took) still cuts the walk short.
    const env = { STORAGE_ROOTS: root };
    const whole = await fastest(2, () => callTool(storage, topConsumers, { path: many, timeout_ms: 15_000 }, { env }));
    const seen: Progress[] = [];
    const result = await callTool(
      storage,
      topConsumers,
      { path: many, timeout_ms: cutShort(whole) },
      { env, onProgress: (p) => seen.push(p as Progress) },
    );
    expect(result.truncated).toBe(true);
    expect(result.entries.length).toBeGreaterThan(0);
    expect(result.scanned.files).toBeLessThan(100_000);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.at(-1)?.files).toBeLessThanOrEqual(result.scanned.files);
  });

  it("stops walking when the client leaves", async () => {
    // A tree big enough that a walk which went on (about half a whole walk again) costs far more than the time
    // the children take to hear of the abort, however loaded the machine (100k files: 14 of 48 ticks in a
    // loaded CI, against 30 of 57 for a walk that went on).
    const big = join(root, "big");
    manyFiles(big, 250, 1000);
    // What a whole walk of the tree costs this server, in CPU ticks.
    const before = cpuTicks(server.pid);
    await client.call("top_consumers", { path: big, n: 1, timeout_ms: 15_000 });
    const whole = cpuTicks(server.pid) - before;
    const aborter = new AbortController();
    let seen = 0;
    try {
      for await (const e of client.stream(
        "top_consumers",
        { path: big, timeout_ms: 15_000 },
        { signal: aborter.signal },
      )) {
        if (e.event === "progress") {
          seen += 1;
          aborter.abort();
        }
      }
    } catch (err) {
      expect((err as Error).name).toBe("AbortError");
    }
    expect(seen).toBe(1);
    const left = cpuTicks(server.pid);
    await sleep(Math.max(1500, whole * 20));
    // A walk that went on spends about half of `whole` again (measured: 30 of 57 ticks of the server alone with
    // the abort check removed); a stopped one what its children walk before they hear of it, and a few ticks of
    // an idle server (a full GC of the quiet trim made 4 in CI once).
    expect(cpuTicks(server.pid) - left).toBeLessThan(Math.max(6, whole / 4));
  });

  it("answers a path outside the roots with an error event, no message, then end", async () => {
    const events: Array<{ event: string; data: unknown }> = [];
    for await (const e of client.stream("top_consumers", { path: "/etc" })) {
      if (e.event !== "ping") events.push({ event: e.event, data: e.data });
    }
    expect(events).toEqual([
      {
        event: "error",
        data: {
          code: "E_FORBIDDEN",
          message: "/etc is outside the directories this server may walk",
          hint: `allowed roots (STORAGE_ROOTS): ${root}`,
        },
      },
      { event: "end", data: { reason: "error" } },
    ]);
  });
});
