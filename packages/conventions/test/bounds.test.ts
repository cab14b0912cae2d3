/**
 * Bounded work, against a real app on 127.0.0.1:0 and a real (fake-binary) subprocess that records each run:
 * calls and streams beyond their bounds get 503 E_BUSY with Retry-After while /healthz still answers;
 * subprocesses beyond MAX_PROCS wait their turn; identical calls run once; identical streams share one producer.
 *
 * Nothing here rests on how fast a loaded machine is: work is held open by a gate the test releases (the
 * `hold` file), the test waits for the server's own counters, and stream durations run on a clock it advances.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { request } from "undici";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { buildHttpApp } from "../src/http/http-app.ts";
import type { Runtime } from "../src/runtime/runtime.ts";
import { type FakeBinaries, fakeBinaries } from "../src/testing/fake-binaries.ts";
import { testRuntime } from "../src/testing/inject.ts";
import { boundsServer, producers } from "./fixtures/bounds-server.ts";

let bin: FakeBinaries;
let runtime: Runtime;
let app: FastifyInstance;
let base: string;
const log = () => `${bin.dir}/runs.log`;
const hold = () => `${bin.dir}/hold`;

beforeAll(async () => {
  bin = await fakeBinaries({
    // "<tag>" to started.log when a run starts; "<tag> <start ns> <end ns>" to runs.log when it ends: overlaps
    // are real concurrency, counted from outside the server. While the file `hold` exists a run waits (at most
    // 20 s), so the test decides how long work stays in flight.
    probe: [
      'd=$(/usr/bin/dirname "$0"); start=$(/bin/date +%s%N); echo "$1" >> "$d/started.log"',
      'i=0; while [ -e "$d/hold" ] && [ $i -lt 2000 ]; do /bin/sleep 0.01; i=$((i + 1)); done',
      '/bin/sleep "$(/usr/bin/printf "0.%03d" "$2")"; echo "$1 $start $(/bin/date +%s%N)" >> "$d/runs.log"; echo "ran $1"',
    ].join("\n"),
  });
  runtime = testRuntime(boundsServer, {
    env: { EXEC_PATH: bin.dir, MAX_CALLS: "4", MAX_STREAMS: "3", MAX_PROCS: "2" },
  });
  app = await buildHttpApp(runtime);
  await app.listen({ host: "127.0.0.1", port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await app?.close();
  await bin?.cleanup();
});

/** A call with room to finish (an answered call never waits on its timeout) unless the test sets its own. */
const post = async (tool: string, body: Record<string, unknown>) => {
  const res = await request(`${base}/actions/${tool}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ timeout_ms: 15_000, ...body }),
  });
  return { status: res.statusCode, headers: res.headers, body: (await res.body.json()) as Record<string, unknown> };
};

async function runs(): Promise<Array<{ tag: string; start: number; end: number }>> {
  const text = await readFile(log(), "utf8").catch(() => "");
  return text
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [tag = "", start = "0", end = "0"] = l.split(" ");
      return { tag, start: Number(BigInt(start) / 1000n), end: Number(BigInt(end) / 1000n) };
    });
}

function peakOverlap(intervals: Array<{ start: number; end: number }>): number {
  const edges = intervals.flatMap((i) => [
    [i.start, 1],
    [i.end, -1],
  ]) as Array<[number, number]>;
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let peak = 0;
  for (const [, d] of edges) {
    now += d;
    peak = Math.max(peak, now);
  }
  return peak;
}

/** Runs started so far (the gate may still hold them). */
async function started(): Promise<string[]> {
  const text = await readFile(`${bin.dir}/started.log`, "utf8").catch(() => "");
  return text.split("\n").filter(Boolean);
}

const realSetTimeout = globalThis.setTimeout;
const delay = (ms: number) => new Promise((r) => realSetTimeout(r, ms));

/** Poll (on the real clock, bounded) until the server's state says what the next step needs. */
async function waitUntil(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (await check()) return;
    await delay(10);
  }
  throw new Error(`still waiting after 10 s: ${what}`);
}

beforeEach(async () => {
  await rm(log(), { force: true });
  await rm(`${bin.dir}/started.log`, { force: true });
  await rm(hold(), { force: true });
});
afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  await rm(hold(), { force: true });
});

describe("bounds on concurrent work", () => {
  it("calls beyond MAX_CALLS get 503 E_BUSY with Retry-After; /healthz answers all the while", async () => {
    await writeFile(hold(), "");
    // Four calls in flight (two running a process, two waiting for a process slot), held until released.
    const held = Array.from({ length: 4 }, (_, n) => post("run_probe", { tag: `held${n}`, ms: 0 }));
    await waitUntil(() => runtime.calls.active === 4, "4 calls in flight");
    const refused = await post("slow", { ms: 10, n: 99 });
    expect(refused.status).toBe(503);
    expect(refused.headers["retry-after"]).toBe("1");
    expect(refused.body).toMatchObject({ error: { code: "E_BUSY" } });
    const health = await request(`${base}/healthz`);
    expect(health.statusCode).toBe(200);
    await health.body.dump();
    // A tool as a stream at the bound: 503 before any event, as on /actions.
    const sse = await request(`${base}/sse/slow?ms=10&n=98`);
    expect(sse.statusCode).toBe(503);
    expect(sse.headers["retry-after"]).toBe("1");
    await sse.body.dump();
    await rm(hold());
    for (const r of await Promise.all(held)) expect(r.status).toBe(200);
    expect((await post("slow", { ms: 1, n: 100 })).status).toBe(200);
  });

  it("subprocesses beyond MAX_PROCS wait their turn: never more than 2 at once, all answered", async () => {
    await writeFile(hold(), "");
    const calls = Array.from({ length: 4 }, (_, n) => post("run_probe", { tag: `p${n}`, ms: 10 }));
    await waitUntil(async () => (await started()).length >= 2, "two runs started");
    // A bound that let more through would have started them by now: they are all waiting on the same gate.
    await delay(100);
    expect(await started()).toHaveLength(2);
    await rm(hold());
    const results = await Promise.all(calls);
    for (const r of results) expect(r.status).toBe(200);
    const seen = await runs();
    expect(seen).toHaveLength(4);
    expect(peakOverlap(seen)).toBe(2);
  });

  it("a call still queued for a process at its deadline ends with E_TIMEOUT", async () => {
    const results = await Promise.all(
      Array.from({ length: 3 }, (_, n) => post("run_probe", { tag: `q${n}`, ms: 600, timeout_ms: 400 })),
    );
    expect(results.map((r) => r.status)).toEqual([504, 504, 504]);
  });

  it("streams beyond MAX_STREAMS get 503 E_BUSY before any event", async () => {
    const controller = new AbortController();
    const open = await Promise.all(
      Array.from({ length: 3 }, (_, n) =>
        request(`${base}/sse/rounds?interval_ms=50&topic=busy${n}&duration_ms=60000`, { signal: controller.signal }),
      ),
    );
    for (const r of open) expect(r.statusCode).toBe(200);
    const refused = await request(`${base}/sse/rounds?interval_ms=50&topic=busy9`);
    expect(refused.statusCode).toBe(503);
    expect(refused.headers["retry-after"]).toBe("1");
    expect(((await refused.body.json()) as { error: { code: string } }).error.code).toBe("E_BUSY");
    controller.abort();
    for (const r of open) await r.body.dump().catch(() => {});
  });
});

describe("identical work runs once", () => {
  it("20 identical concurrent calls share one execution, each with its own run_id", async () => {
    const joined = vi.spyOn(runtime.shared, "run");
    await writeFile(hold(), "");
    const calls = Array.from({ length: 20 }, (_, n) => post("run_probe", { tag: "same", ms: 0, run_id: `r${n}` }));
    // Every caller has reached the single-flight while the first run is held: all 20 are concurrent.
    await waitUntil(() => joined.mock.calls.length === 20, "20 callers in");
    await rm(hold());
    const results = await Promise.all(calls);
    expect((await runs()).filter((r) => r.tag === "same")).toHaveLength(1);
    expect(results.map((r) => r.body.run_id)).toEqual(Array.from({ length: 20 }, (_, n) => `r${n}`));
    for (const r of results) expect(r.body).toMatchObject({ tag: "same", out: "ran same", summary: "ran same" });
  });

  it("different input is different work", async () => {
    await Promise.all([post("run_probe", { tag: "x1", ms: 50 }), post("run_probe", { tag: "x2", ms: 50 })]);
    expect((await runs()).map((r) => r.tag).sort()).toEqual(["x1", "x2"]);
  });

  it("a snapshot tool answers from its short cache, then runs again", async () => {
    // The cache's clock is ours: the second call comes "at once" however long the machine took to send it.
    vi.useFakeTimers({ toFake: ["performance"] });
    await post("snapshot", {});
    await post("snapshot", {});
    expect(await runs()).toHaveLength(1);
    vi.advanceTimersByTime(299);
    await post("snapshot", {});
    expect(await runs()).toHaveLength(1);
    vi.advanceTimersByTime(1);
    await post("snapshot", {});
    expect(await runs()).toHaveLength(2);
  });

  it("a caller leaving does not cancel the work others wait for", async () => {
    const joined = vi.spyOn(runtime.shared, "run");
    await writeFile(hold(), "");
    const controller = new AbortController();
    const leaving = request(`${base}/actions/run_probe`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tag: "shared", ms: 0, timeout_ms: 15_000 }),
      signal: controller.signal,
    }).catch(() => undefined);
    await waitUntil(async () => (await started()).includes("shared"), "the shared run started");
    const staying = post("run_probe", { tag: "shared", ms: 0 });
    await waitUntil(() => joined.mock.calls.length === 2, "the second caller joined");
    controller.abort();
    await leaving;
    // The server has seen the first caller go (its signal aborted) before the work may finish.
    const leftSignal = joined.mock.calls[0]?.[1];
    await waitUntil(() => leftSignal?.aborted === true, "the server saw the first caller leave");
    await rm(hold());
    const r = await staying;
    expect(r.status).toBe(200);
    expect(r.body.out).toBe("ran shared");
    expect(await runs()).toHaveLength(1);
  });

  it("identical streams share one producer; each keeps its run_id and its own duration", async () => {
    // Durations and rounds run on a clock the test advances: all three subscribe at the same instant, however
    // long the machine took to connect them, and each ends exactly at its own duration.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
    const startedBefore = producers.started;
    const ended = new Set<string>();
    const read = async (runId: string, duration: number) => {
      const res = await request(
        `${base}/sse/rounds?interval_ms=30&topic=shared&duration_ms=${duration}&run_id=${runId}`,
      );
      const text = await res.body.text();
      ended.add(runId);
      return text;
    };
    const reading = Promise.all([read("a", 400), read("b", 400), read("c", 250)]);
    await waitUntil(() => runtime.hub.stats().subscribers === 3, "three subscribers");
    expect(runtime.hub.stats().producers).toBe(1);
    // Step the clock a round at a time, letting the messages reach the sockets in between.
    const step = async (toMs: number) => {
      for (let t = 0; t < toMs; t += 10) {
        await vi.advanceTimersByTimeAsync(10);
        await delay(1);
      }
    };
    await step(240);
    expect([...ended]).toEqual([]);
    await step(20);
    await waitUntil(() => ended.has("c"), "c ends at 250 ms");
    expect([...ended]).toEqual(["c"]);
    await step(130);
    expect([...ended]).toEqual(["c"]);
    await step(20);
    const [a, b, c] = await reading;
    expect(producers.started - startedBefore).toBe(1);
    for (const [text, id] of [
      [a, "a"],
      [b, "b"],
      [c, "c"],
    ] as const) {
      expect(text).toContain(`"run_id":"${id}"`);
      expect(text).toContain("event: message");
      expect(text.trim().split("\n").slice(-2)).toEqual(["event: end", 'data: {"reason":"duration"}']);
    }
    // Once every subscriber has gone, the producer stops.
    expect(runtime.hub.stats()).toEqual({ producers: 0, subscribers: 0 });
    await waitUntil(() => producers.active === 0, "the producer stopped");
  });
});

describe("shutdown", () => {
  it("closing the app sends `end` (reason shutdown) to every open stream first, with no listener warning", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on("warning", onWarning);
    const closing = await buildHttpApp(testRuntime(boundsServer, { env: { MAX_STREAMS: "64" } }));
    await closing.listen({ host: "127.0.0.1", port: 0 });
    const url = `http://127.0.0.1:${(closing.server.address() as AddressInfo).port}`;
    // Every stream open (its response begun) before the close: a request still connecting is not a stream yet.
    const open = await Promise.all(
      Array.from({ length: 50 }, (_, n) =>
        request(`${url}/sse/rounds?interval_ms=100&topic=t${n % 5}&duration_ms=60000`),
      ),
    );
    for (const res of open) expect(res.statusCode).toBe(200);
    const reads = open.map((res) => res.body.text());
    await closing.close();
    const texts = await Promise.all(reads);
    for (const text of texts) {
      expect(text.trim().split("\n").slice(-2)).toEqual(["event: end", 'data: {"reason":"shutdown"}']);
    }
    process.off("warning", onWarning);
    expect(warnings.filter((w) => w.startsWith("MaxListenersExceededWarning"))).toEqual([]);
  });
});
