/**
 * `roadnerd up` hosts every server in one process: one server's fault (an exception nothing caught, a hung
 * tool, its bound hit) never takes another down, and the faulted one restarts on its port. Driven through a
 * real child process (test/fixtures/faulty-up.ts) so the uncaught exception is the process's own, not vitest's.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { join } from "node:path";
import { createClient } from "@roadnerd/client";
import { REPO_ROOT } from "@roadnerd/registry";
import { scaledMs } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let child: ChildProcessWithoutNullStreams;
let lines: Array<Record<string, unknown>> = [];
let stderr = "";
let urls: Record<string, { url: string }>;

async function until<T>(what: () => T | undefined, tries = 600): Promise<T> {
  for (let i = 0; i < tries; i += 1) {
    const v = what();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out; stderr: ${stderr}`);
}

async function status(): Promise<Record<string, { state: string; restarts: number; last_fault?: string }>> {
  const before = lines.length;
  child.stdin.write("\n");
  const line = await until(() => lines.slice(before).find((l) => "status" in l));
  return line.status as Record<string, { state: string; restarts: number; last_fault?: string }>;
}

beforeAll(async () => {
  child = spawn(
    process.execPath,
    [join(REPO_ROOT, "scripts/run-ts.mjs"), "packages/orchestrator/test/fixtures/faulty-up.ts"],
    {
      cwd: REPO_ROOT,
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  let buffered = "";
  child.stdout.on("data", (d: Buffer) => {
    buffered += d.toString();
    const parts = buffered.split("\n");
    buffered = parts.pop() ?? "";
    lines.push(...parts.filter(Boolean).map((l) => JSON.parse(l)));
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const first = await until(() => lines.find((l) => "started" in l));
  urls = first.started as Record<string, { url: string }>;
}, 120_000);

afterAll(() => {
  if (child.exitCode === null) child.kill("SIGTERM");
  lines = [];
});

describe("in-process up: faults stay with their server", () => {
  it("an uncaught exception in one server's tool restarts that server only, on the same port", async () => {
    const bad = createClient(urls.bad?.url ?? "");
    const good = createClient(urls.good?.url ?? "");
    expect(await bad.call("explode", {})).toMatchObject({ armed: true });
    await until(() => (stderr.includes("bad restarted") ? true : undefined));
    expect(stderr).toContain("bad faulted (Error: boom in a timer)");
    expect(child.exitCode).toBeNull();
    expect(await good.call("hello", {})).toMatchObject({ hello: "world" });
    const s = await status();
    expect(s.bad).toMatchObject({ state: "up", restarts: 1, last_fault: "Error: boom in a timer" });
    expect(s.good).toMatchObject({ state: "up", restarts: 0 });
    // Restarted on its own port: the same URL answers again.
    expect(await bad.healthz()).toMatchObject({ ok: true });
  }, 120_000);

  it("a hung tool filling its server's bound leaves the other server answering", async () => {
    const bad = createClient(urls.bad?.url ?? "");
    const good = createClient(urls.good?.url ?? "");
    // MAX_CALLS=2: two hung calls take every slot of `bad`; a third is refused with E_BUSY, `good` is untouched.
    const hang = (n: number) => {
      const h = { busy: false, done: Promise.resolve<unknown>(undefined) };
      h.done = bad.call("hang", { n, timeout_ms: 15_000 }).catch((e: { code?: string }) => {
        if (e.code === "E_BUSY") h.busy = true;
        return e;
      });
      return h;
    };
    let hung = [hang(1), hang(2)];
    // A hung call that lost its slot to a probe (refused E_BUSY) is sent again, so both end up holding one.
    const refill = () => {
      hung = hung.map((h, i) => (h.busy ? hang(100 + i) : h));
    };
    // Until both hung calls hold their slots, a probe call is admitted and ends at its own short deadline.
    let third = "";
    // Bounded by a deadline that scales with the load: a busy machine admits the hung calls late.
    const until = Date.now() + scaledMs(10_000);
    for (let i = 0; Date.now() < until && third !== "E_BUSY"; i += 1) {
      refill();
      third = await bad.call("hang", { n: 3 + i, timeout_ms: 100 }).then(
        () => "answered",
        (e: { code?: string }) => e.code ?? "",
      );
    }
    expect(third).toBe("E_BUSY");
    expect(await good.call("hello", {})).toMatchObject({ hello: "world" });
    child.kill("SIGTERM");
    await Promise.all(hung.map((h) => h.done));
  }, 120_000);
});
