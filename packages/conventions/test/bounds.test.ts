/**
 * Bounded work, against a real app on 127.0.0.1:0 and a real (fake-binary) subprocess that records each run:
 * calls and streams beyond their bounds get 503 E_BUSY with Retry-After while /healthz still answers;
 * subprocesses beyond MAX_PROCS wait their turn; identical calls run once; identical streams share one producer.
 */
import { readFile, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { request } from "undici";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
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

beforeAll(async () => {
  bin = await fakeBinaries({
    // "<tag> <start ns> <end ns>" per run: overlaps are real concurrency, counted from outside the server.
    probe:
      'start=$(/bin/date +%s%N); /bin/sleep "$(/usr/bin/printf "0.%03d" "$2")"; echo "$1 $start $(/bin/date +%s%N)" >> "$(/usr/bin/dirname "$0")/runs.log"; echo "ran $1"',
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

const post = async (tool: string, body: unknown) => {
  const res = await request(`${base}/actions/${tool}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
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

beforeEach(async () => {
  await rm(log(), { force: true });
});

describe("bounds on concurrent work", () => {
  it("calls beyond MAX_CALLS get 503 E_BUSY with Retry-After; /healthz answers all the while", async () => {
    const held = Array.from({ length: 4 }, (_, n) => post("slow", { ms: 800, n }));
    await new Promise((r) => setTimeout(r, 100));
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
    for (const r of await Promise.all(held)) expect(r.status).toBe(200);
    expect((await post("slow", { ms: 1, n: 100 })).status).toBe(200);
  });

  it("subprocesses beyond MAX_PROCS wait their turn: never more than 2 at once, all answered", async () => {
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, n) => post("run_probe", { tag: `p${n}`, ms: 150 })),
    );
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
        request(`${base}/sse/rounds?interval_ms=50&topic=busy${n}&duration_ms=5000`, { signal: controller.signal }),
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
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, n) => post("run_probe", { tag: "same", ms: 200, run_id: `r${n}` })),
    );
    expect((await runs()).filter((r) => r.tag === "same")).toHaveLength(1);
    expect(results.map((r) => r.body.run_id)).toEqual(Array.from({ length: 20 }, (_, n) => `r${n}`));
    for (const r of results) expect(r.body).toMatchObject({ tag: "same", out: "ran same", summary: "ran same" });
  });

  it("different input is different work", async () => {
    await Promise.all([post("run_probe", { tag: "x1", ms: 50 }), post("run_probe", { tag: "x2", ms: 50 })]);
    expect((await runs()).map((r) => r.tag).sort()).toEqual(["x1", "x2"]);
  });

  it("a snapshot tool answers from its short cache, then runs again", async () => {
    await post("snapshot", {});
    await post("snapshot", {});
    expect(await runs()).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 350));
    await post("snapshot", {});
    expect(await runs()).toHaveLength(2);
  });

  it("a caller leaving does not cancel the work others wait for", async () => {
    const controller = new AbortController();
    const leaving = request(`${base}/actions/run_probe`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ tag: "shared", ms: 300 }),
      signal: controller.signal,
    }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 50));
    const staying = post("run_probe", { tag: "shared", ms: 300 });
    await new Promise((r) => setTimeout(r, 50));
    controller.abort();
    await leaving;
    const r = await staying;
    expect(r.status).toBe(200);
    expect(r.body.out).toBe("ran shared");
    expect(await runs()).toHaveLength(1);
  });

  it("identical streams share one producer; each keeps its run_id and its own duration", async () => {
    const startedBefore = producers.started;
    const read = async (runId: string, duration: number) => {
      const res = await request(
        `${base}/sse/rounds?interval_ms=30&topic=shared&duration_ms=${duration}&run_id=${runId}`,
      );
      return res.body.text();
    };
    const [a, b, c] = await Promise.all([read("a", 400), read("b", 400), read("c", 250)]);
    expect(producers.started - startedBefore).toBe(1);
    for (const [text, id] of [
      [a, "a"],
      [b, "b"],
      [c, "c"],
    ] as const) {
      expect(text).toContain(`"run_id":"${id}"`);
      expect(text.trim().split("\n").slice(-2)).toEqual(["event: end", 'data: {"reason":"duration"}']);
    }
    expect((c.match(/event: message/g) ?? []).length).toBeLessThan((a.match(/event: message/g) ?? []).length);
    // Once every subscriber has gone, the producer stops.
    await new Promise((r) => setTimeout(r, 100));
    expect(runtime.hub.stats()).toEqual({ producers: 0, subscribers: 0 });
    expect(producers.active).toBe(0);
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
    const reads = Array.from({ length: 50 }, async (_, n) => {
      const res = await request(`${url}/sse/rounds?interval_ms=100&topic=t${n % 5}&duration_ms=60000`);
      return res.body.text();
    });
    await new Promise((r) => setTimeout(r, 300));
    await closing.close();
    const texts = await Promise.all(reads);
    for (const text of texts) {
      expect(text.trim().split("\n").slice(-2)).toEqual(["event: end", 'data: {"reason":"shutdown"}']);
    }
    process.off("warning", onWarning);
    expect(warnings.filter((w) => w.startsWith("MaxListenersExceededWarning"))).toEqual([]);
  });
});
