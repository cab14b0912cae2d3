/**
 * GET /metrics against a real app on 127.0.0.1:0 whose tool runs a real (fake-binary) subprocess held open by a
 * gate the test releases: the running and queued counts, refusals at the bound, calls by tool and code, latency
 * histograms and process metrics, all in Prometheus's text format; a scrape answers while every slot is taken.
 */
import { rm, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildHttpApp } from "../../src/http/http-app.ts";
import type { Runtime } from "../../src/runtime/runtime.ts";
import { type FakeBinaries, fakeBinaries } from "../../src/testing/fake-binaries.ts";
import { testRuntime } from "../../src/testing/inject.ts";
import { boundsServer } from "../fixtures/bounds-server.ts";

let bin: FakeBinaries;
let runtime: Runtime;
let app: FastifyInstance;
let base: string;
const hold = () => `${bin.dir}/hold`;
const TOKEN = "metrics-test-token-0123456789";
const auth = { authorization: `Bearer ${TOKEN}` };

beforeAll(async () => {
  bin = await fakeBinaries({
    // While the file `hold` exists a run waits (at most 20 s): the test decides how long work stays in flight.
    probe: [
      'd=$(/usr/bin/dirname "$0"); i=0',
      'while [ -e "$d/hold" ] && [ $i -lt 2000 ]; do /bin/sleep 0.01; i=$((i + 1)); done; echo "ran $1"',
    ].join("\n"),
  });
  runtime = testRuntime(boundsServer, {
    env: { EXEC_PATH: bin.dir, MAX_CALLS: "3", MAX_STREAMS: "3", MAX_PROCS: "2", AUTH_TOKEN: TOKEN },
  });
  app = await buildHttpApp(runtime);
  await app.listen({ host: "127.0.0.1", port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await rm(hold(), { force: true });
  await app?.close();
  await bin?.cleanup();
});

const post = async (tool: string, body: Record<string, unknown>) => {
  const res = await request(`${base}/actions/${tool}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...auth },
    body: JSON.stringify({ timeout_ms: 15_000, ...body }),
  });
  await res.body.dump();
  return res.statusCode;
};

async function scrape(): Promise<{ status: number; type: string; text: string }> {
  const res = await request(`${base}/metrics`, { headers: auth });
  return { status: res.statusCode, type: String(res.headers["content-type"]), text: await res.body.text() };
}

/** The value of one series (exact name and labels as Prometheus prints them), or undefined when absent. */
function value(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function waitUntil(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (check()) return;
    await delay(10);
  }
  throw new Error(`still waiting after 10 s: ${what}`);
}

describe("GET /metrics", () => {
  it("needs the token like every route", async () => {
    const res = await request(`${base}/metrics`);
    expect(res.statusCode).toBe(401);
    await res.body.dump();
  });

  it("answers while every slot is taken: running, queued, refusals at the bound", async () => {
    await writeFile(hold(), "");
    const held = ["a", "b", "c"].map((tag) => post("run_probe", { tag, ms: 0 }));
    await waitUntil(() => runtime.calls.active === 3 && runtime.procs.waiting === 1, "3 calls, 1 process queued");
    expect(await post("slow", { ms: 1, n: 1 })).toBe(503);
    const busy = await scrape();
    expect(busy.status).toBe(200);
    expect(busy.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(value(busy.text, "roadnerd_tool_calls_running")).toBe(3);
    expect(value(busy.text, "roadnerd_subprocesses_running")).toBe(2);
    expect(value(busy.text, "roadnerd_subprocesses_queued")).toBe(1);
    expect(value(busy.text, 'roadnerd_bound_refusals_total{bound="tool_calls"}')).toBe(1);
    expect(value(busy.text, 'roadnerd_bound_limit{bound="subprocesses"}')).toBe(2);
    await rm(hold());
    expect(await Promise.all(held)).toEqual([200, 200, 200]);
    const after = await scrape();
    expect(value(after.text, "roadnerd_tool_calls_running")).toBe(0);
    expect(value(after.text, "roadnerd_subprocesses_queued")).toBe(0);
    expect(value(after.text, 'roadnerd_tool_calls_total{tool="run_probe",code="ok"}')).toBe(3);
    expect(value(after.text, 'roadnerd_tool_calls_total{tool="slow",code="E_BUSY"}')).toBe(1);
    expect(value(after.text, 'roadnerd_tool_call_duration_seconds_count{tool="run_probe"}')).toBe(3);
    expect(value(after.text, 'roadnerd_tool_call_duration_seconds_bucket{le="+Inf",tool="run_probe"}')).toBe(3);
  });

  it("counts bad input by its code, and carries the server's identity and process metrics", async () => {
    expect(await post("slow", { ms: "soon", n: 1 })).toBe(400);
    const { text } = await scrape();
    expect(value(text, 'roadnerd_tool_calls_total{tool="slow",code="E_INVALID_INPUT"}')).toBe(1);
    expect(value(text, `roadnerd_server_info{server="${boundsServer.name}",version="${boundsServer.version}"}`)).toBe(
      1,
    );
    expect(value(text, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
    expect(value(text, "process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(text).toMatch(/^# TYPE nodejs_eventloop_lag_seconds gauge$/m);
  });

  it("keeps each runtime's series apart", async () => {
    const other = testRuntime(boundsServer, { env: { EXEC_PATH: bin.dir } });
    const text = await other.metrics.render();
    expect(value(text, 'roadnerd_tool_calls_total{tool="run_probe",code="ok"}')).toBeUndefined();
    expect(text).toMatch(/^# TYPE roadnerd_tool_calls_total counter$/m);
    await other.close();
  });
});
