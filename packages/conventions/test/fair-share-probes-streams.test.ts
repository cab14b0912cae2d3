/**
 * Regression (red-team review, ADR 0046): two holes in the per-caller share of ADR 0041.
 * - `/probe` took its call slot under the shared `local` key and could not be preempted: one uid holding slow
 *   probes left the other uid's `/actions` E_BUSY 6 times of 6 (both directions, root and 65534). Now a probe
 *   counts under its scraper's key and gives way like any call (answered 503 E_BUSY at once).
 * - Stream slots (MAX_STREAMS) were first come, first served: 65534 holding 40 streams left root's `/sse/<tool>`
 *   refused 3 times of 3. Now they are shared by the same rule; the biggest holder's newest stream ends with an
 *   `error` event E_BUSY and gives its slot.
 * Real everything: a server on 127.0.0.1:0, root in this process, uid 65534 a setpriv child.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { pollUntil, scaledMs } from "@roadnerd/testkit";
import type { FastifyInstance } from "fastify";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineServerWith } from "../src/define/server-def.ts";
import { buildHttpApp } from "../src/http/http-app.ts";
import { probeEnv } from "../src/probe/modules.ts";
import { defineProber } from "../src/probe/prober.ts";
import type { Runtime } from "../src/runtime/runtime.ts";
import { testRuntime } from "../src/testing/inject.ts";
import { demoPackage, demoServer } from "./fixtures/demo-server.ts";

const run = promisify(execFile);
const NOBODY = 65534;
const MAX_CALLS = 4;
const MAX_STREAMS = 4;

/** Releases every held probe (the end of a test), so none outlives the app. */
let releaseProbes = new AbortController();

/** A prober as slow as a silent target: it answers only at its deadline (or when the test lets go). */
const hang = defineProber({
  name: "hang",
  options: z.strictObject({}),
  defaults: { hang: {} },
  run: (_target, _o, ctx) =>
    new Promise((resolve) => {
      const done = () => resolve({ success: false, series: [] });
      ctx.signal.addEventListener("abort", done, { once: true });
      releaseProbes.signal.addEventListener("abort", done, { once: true });
    }),
});

const server = defineServerWith(probeEnv)({
  package: demoPackage,
  instructions: "Kernel test server with a prober.",
  tools: demoServer.tools,
  streams: demoServer.streams,
  probers: [hang],
});

let app: FastifyInstance;
let runtime: Runtime<unknown>;
let base: string;
const agent = new Agent({ connections: 40 });
const PROBE = "/probe?module=hang&target=http://127.0.0.1:9/";
const SCRAPE = { "x-prometheus-scrape-timeout-seconds": "15" };

interface Answer {
  status: number;
  body: string;
}

/** uid 65534 makes `paths` (GET) all at once from a child; resolves with each answer when all have ended. */
function nobodyGets(
  paths: string[],
  headers: Record<string, string> = {},
): { child: ChildProcess; done: Promise<Answer[]> } {
  const { port } = new URL(base);
  const script = `const h=require("node:http");const a=new h.Agent({keepAlive:false,maxSockets:100});Promise.all(${JSON.stringify(paths)}.map(p=>new Promise(res=>{const q=h.get({host:"127.0.0.1",port:${port},path:p,agent:a,headers:${JSON.stringify(headers)}},r=>{let b="";r.on("data",d=>b+=d);r.on("end",()=>res({status:r.statusCode,body:b}));r.on("error",e=>res({status:r.statusCode,body:b+String(e)}))});q.on("error",e=>res({status:0,body:String(e)}))}))).then(x=>process.stdout.write(JSON.stringify(x)))`;
  const child = spawn(
    "setpriv",
    [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", process.execPath, "-e", script],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  const done = new Promise<Answer[]>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", () => resolve(JSON.parse(out || "[]") as Answer[]));
  });
  return { child, done };
}

/** POST /actions/<tool> as uid 65534 from a child process. */
async function nobodyPosts(tool: string, body: unknown): Promise<Answer> {
  const { port } = new URL(base);
  const script = `const h=require("node:http");const q=h.request({host:"127.0.0.1",port:${port},path:"/actions/${tool}",method:"POST",headers:{"content-type":"application/json"}},r=>{let b="";r.on("data",d=>b+=d);r.on("end",()=>process.stdout.write(JSON.stringify({status:r.statusCode,body:b})))});q.on("error",e=>process.stdout.write(JSON.stringify({status:0,body:String(e)})));q.end(${JSON.stringify(JSON.stringify(body))})`;
  const { stdout } = await run(
    "setpriv",
    [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", process.execPath, "-e", script],
    { timeout: scaledMs(20_000) },
  );
  return JSON.parse(stdout) as Answer;
}

/** Streams refused at the bound so far, from the runtime's own metrics. */
async function streamRefusals(): Promise<number> {
  const m = /^roadnerd_bound_refusals_total\{[^}]*bound="streams"[^}]*\} (\d+)$/m.exec(await runtime.metrics.render());
  return Number(m?.[1] ?? 0);
}

/** Root's GET, read to the end (a stream ends at its `end` event). */
async function rootGets(path: string, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Answer> {
  const r = await request(`${base}${path}`, { headers, dispatcher: agent, signal });
  return { status: r.statusCode, body: await r.body.text() };
}

beforeAll(async () => {
  runtime = testRuntime(server, {
    env: { MAX_CALLS: String(MAX_CALLS), MAX_STREAMS: String(MAX_STREAMS), ALLOWED_UIDS: String(NOBODY) },
  });
  app = await buildHttpApp(runtime);
  await app.listen({ host: "127.0.0.1", port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  releaseProbes.abort();
  await app?.close();
  await agent.close();
});

const busy = (a: Answer) => a.status === 503 && a.body.includes("E_BUSY");

describe("probes count under their scraper and give way", () => {
  it("root holds slow probes: uid 65534's call is served, root's newest probe answered 503 E_BUSY", async () => {
    releaseProbes = new AbortController();
    const answers: Answer[] = [];
    const held = Array.from({ length: MAX_CALLS + 2 }, () =>
      rootGets(PROBE, SCRAPE).then((a) => {
        answers.push(a);
        return a;
      }),
    );
    await pollUntil(() => runtime.calls.active === MAX_CALLS && answers.length === 2, 10_000);
    // Alone, root fills every slot and its excess is refused, as before.
    expect(answers.every(busy)).toBe(true);

    // Before: 503 E_BUSY (the probes held their slots under `local`, out of reach).
    const served = await nobodyPosts("echo_name", { name: "example.com" });
    expect(served.status).toBe(200);
    expect(JSON.parse(served.body)).toMatchObject({ name: "example.com" });
    await pollUntil(() => answers.length === 3, 5_000);
    expect(busy(answers[2] as Answer)).toBe(true);
    expect(runtime.calls.heldBy("uid:0")).toBe(MAX_CALLS - 1);

    releaseProbes.abort();
    for (const a of await Promise.all(held)) expect([200, 503]).toContain(a.status);
  }, 60_000);

  it("uid 65534 holds slow probes: root's call is served, 65534's newest probe answered 503 E_BUSY", async () => {
    releaseProbes = new AbortController();
    const { done } = nobodyGets(
      Array.from({ length: MAX_CALLS }, () => PROBE),
      SCRAPE,
    );
    await pollUntil(() => runtime.calls.active === MAX_CALLS, 15_000);

    const r = await request(`${base}/actions/echo_name`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "example.org" }),
      dispatcher: agent,
    });
    // Before: 503 E_BUSY.
    expect(r.statusCode).toBe(200);
    expect(await r.body.json()).toMatchObject({ name: "example.org" });
    expect(runtime.calls.heldBy(`uid:${NOBODY}`)).toBe(MAX_CALLS - 1);

    releaseProbes.abort();
    const answers = await done;
    expect(answers).toHaveLength(MAX_CALLS);
    expect(answers.filter(busy)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(MAX_CALLS - 1);
  }, 60_000);
});

describe("stream slots are shared per caller", () => {
  it("uid 65534 holds every stream: root's stream is served, 65534's newest stream ends with error E_BUSY", async () => {
    const paths = Array.from(
      { length: MAX_STREAMS + 2 },
      (_, i) => `/sse/ticks?interval_ms=1000&duration_ms=60000&run_id=n${i}`,
    );
    const { done } = nobodyGets(paths);
    await pollUntil(() => runtime.streams.active === MAX_STREAMS, 15_000);
    // Both of 65534's excess streams refused before root asks: on a loaded machine one of them could still be on
    // its way, and take the slot root's finished stream frees.
    const deadline = performance.now() + scaledMs(15_000);
    while ((await streamRefusals()) < 2 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    expect(await streamRefusals()).toBe(2);

    // Before: 503 E_BUSY before any event.
    const root = await rootGets("/sse/echo_name?name=example.com");
    expect(root.status).toBe(200);
    expect(root.body).toMatch(/event: message\ndata: .*example\.com/);
    expect(root.body).toMatch(/event: end/);
    // Root's stream is over: its slot is free again, and 65534 lost exactly one.
    await pollUntil(() => runtime.streams.active === MAX_STREAMS - 1, 5_000);
    expect(runtime.streams.heldBy(`uid:${NOBODY}`)).toBe(MAX_STREAMS - 1);

    await app.close();
    const answers = await done;
    expect(answers).toHaveLength(MAX_STREAMS + 2);
    // Alone, 65534 filled every slot and its excess was refused before any event, as before.
    expect(answers.filter(busy)).toHaveLength(2);
    const streamed = answers.filter((a) => a.status === 200);
    const lost = streamed.filter((a) => /event: error\ndata: .*E_BUSY/.test(a.body));
    expect(lost).toHaveLength(1);
    expect(lost[0]?.body).toMatch(/gave its slot to another caller/);
    expect(lost[0]?.body).toMatch(/event: end\ndata: .*"error"/);
    // The others ran until the server shut down.
    expect(streamed.filter((a) => /"shutdown"/.test(a.body))).toHaveLength(MAX_STREAMS - 1);
  }, 60_000);
});
