import type { AddressInfo } from "node:net";
import { createClient } from "@roadnerd/client";
import type { FastifyInstance } from "fastify";
import { request } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { buildApp } from "../src/http/http-app.ts";
import { silentLogger } from "../src/testing/silent-logger.ts";
import { demoServer, tickLoops } from "./fixtures/demo-server.ts";

let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  app = await buildApp(demoServer, { env: {}, logger: silentLogger() });
  await app.listen({ host: "127.0.0.1", port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});
afterAll(() => app.close());
afterEach(() => {
  vi.useRealTimers();
});

const realSetTimeout = globalThis.setTimeout;
const delay = (ms: number) => new Promise((r) => realSetTimeout(r, ms));

/** Poll on the real clock (bounded): the fake one only moves when the test says. */
async function waitUntil(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await delay(10);
  if (!check()) throw new Error(`still waiting after 10 s: ${what}`);
}

async function collect(name: string, query: Record<string, string | number> = {}) {
  const events: Array<{ event: string; data: unknown }> = [];
  for await (const e of createClient(base).stream(name, query)) events.push({ event: e.event, data: e.data });
  return events;
}

describe("SSE", () => {
  it("/sse/<tool>: ping, one message with the tool result, end", async () => {
    const events = await collect("echo_name", { name: "ab.example", limit: 2, run_id: "s1" });
    expect(events.map((e) => e.event)).toEqual(["ping", "message", "end"]);
    expect(events[1]?.data).toEqual({
      name: "ab.example",
      letters: ["a", "b"],
      truncated: true,
      omitted: 8,
      summary: "name ab.example",
      run_id: "s1",
    });
    expect(events[2]?.data).toEqual({ reason: "done" });
  });

  it("pings while a slow tool runs", async () => {
    const events = await collect("sleepy", { ms: 1500, timeout_ms: 3000 });
    expect(events.filter((e) => e.event === "ping").length).toBeGreaterThanOrEqual(2);
    expect(events.at(-2)).toEqual({ event: "message", data: { waited: 1500, summary: "waited 1500" } });
  });

  it("/sse/<tool>: what the tool passes to ctx.progress arrives as progress events before its message", async () => {
    const events = await collect("sleepy", { ms: 400 });
    expect(events.filter((e) => e.event !== "ping")).toEqual([
      { event: "progress", data: { waited_so_far: 200 } },
      { event: "message", data: { waited: 400, summary: "waited 400" } },
      { event: "end", data: { reason: "done" } },
    ]);
    // The same call over /actions answers only the result.
    const res = await request(`${base}/actions/sleepy`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ms: 400 }),
    });
    expect(await res.body.json()).toEqual({ waited: 400, summary: "waited 400" });
  });

  it("a tool failure is an error event then end", async () => {
    const events = await collect("broken", { mode: "diag" });
    expect(events.slice(1)).toEqual([
      { event: "error", data: { code: "E_NO_BINARY", message: "frobnicate is not installed" } },
      { event: "end", data: { reason: "error" } },
    ]);
  });

  it("a stream is bounded by duration_ms", async () => {
    // Ticks and the duration run on the test's clock, so the end comes at 450 ms exactly, whatever the load;
    // the socket stays real, and each step of the clock leaves it a real moment to carry what was sent.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
    const events: Array<{ event: string; data: unknown }> = [];
    let ended = false;
    const reading = (async () => {
      const query = { interval_ms: 100, duration_ms: 450, run_id: "w" };
      for await (const e of createClient(base).stream("ticks", query)) events.push({ event: e.event, data: e.data });
      ended = true;
    })();
    await waitUntil(() => events.some((e) => e.event === "message"), "the first tick");
    const step = async (ms: number) => {
      for (let t = 0; t < ms; t += 10) {
        await vi.advanceTimersByTimeAsync(10);
        await delay(1);
      }
    };
    await step(440);
    await vi.advanceTimersByTimeAsync(9);
    await delay(20);
    expect(ended).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await reading;
    const messages = events.filter((e) => e.event === "message").map((e) => e.data as { n: number });
    // Ticks at 0, 100, 200, 300 and 400 ms (a reader that falls behind gets the newest): never a sixth.
    expect(messages[0]).toEqual({ n: 1, summary: "tick 1", run_id: "w" });
    expect(messages.at(-1)?.n).toBe(5);
    expect(messages.length).toBeLessThanOrEqual(5);
    expect(events.at(-1)).toEqual({ event: "end", data: { reason: "duration" } });
  });

  it("query numbers must be plain decimals, as in a JSON body", async () => {
    for (const bad of ["0x32", "1e2", "%2050"]) {
      const res = await request(`${base}/sse/ticks?interval_ms=${bad}`);
      expect(res.statusCode, bad).toBe(400);
      await res.body.dump();
    }
  });

  // Regression (attacker review, ADR 0063): the query parser drops a __proto__ key, so the stream ran.
  it("a __proto__ parameter is refused, as the key is in a JSON body", async () => {
    for (const q of ["__proto__=1", "%5F%5Fproto%5F%5F=1", "__proto__[x]=1"]) {
      const res = await request(`${base}/sse/ticks?interval_ms=100&${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(((await res.body.json()) as { error: { code: string; message: string } }).error, q).toMatchObject({
        code: "E_INVALID_INPUT",
        message: expect.stringContaining("__proto__"),
      });
    }
  });

  it("a parameter given twice is a 400, not a silent pick", async () => {
    const res = await request(`${base}/sse/ticks?interval_ms=100&interval_ms=200`);
    expect(res.statusCode).toBe(400);
    expect(((await res.body.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: "E_INVALID_INPUT",
      message: "interval_ms: given 2 times; give it once",
    });
  });

  it("bad query input is a 400 with a typed body before any stream starts", async () => {
    const res = await request(`${base}/sse/ticks?interval_ms=abc`);
    expect(res.statusCode).toBe(400);
    expect(((await res.body.json()) as { error: { code: string } }).error.code).toBe("E_INVALID_INPUT");
    const unknown = await request(`${base}/sse/nope`);
    expect(unknown.statusCode).toBe(404);
    expect(((await unknown.body.json()) as { error: { code: string } }).error.code).toBe("E_UNKNOWN_TOOL");
  });

  it("stops the work when the client goes away", async () => {
    const controller = new AbortController();
    let seen = 0;
    try {
      for await (const e of createClient(base).stream(
        "ticks",
        { interval_ms: 20, duration_ms: 60_000 },
        { signal: controller.signal },
      )) {
        if (e.event === "message" && ++seen === 3) controller.abort();
      }
    } catch {
      // aborted on purpose
    }
    expect(seen).toBe(3);
    // The server notices the closed socket and the stream's loop ends, long before its 60 s duration.
    await waitUntil(() => tickLoops.active === 0, "the stream's loop ends");
    expect(tickLoops.active).toBe(0);
  });
});
