/**
 * Resources owned by the runtime: made on first use, one per runtime, typed from the kit's config, closed
 * latest first with the runtime (once, bounded, a failing hook logged), refused once closing; callTool closes
 * the fresh runtime it made, HTTP closes the app's runtime. SharedCalls.close stops its work in flight.
 */

import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createKit } from "../src/define/kit.ts";
import { buildHttpApp } from "../src/http/http-app.ts";
import { RESOURCE_CLOSE_MS } from "../src/runtime/resources.ts";
import { createSharedCalls } from "../src/runtime/shared-calls.ts";
import { callTool, testRuntime } from "../src/testing/inject.ts";
import { thrown } from "../src/testing/thrown.ts";
import { demoPackage } from "./fixtures/demo-server.ts";

const kit = createKit({ env: { COUNTER_START: z.coerce.number().int().default(0).describe("first value") } });

/** Every instance made and every close, in order, for the tests to read. */
const events: string[] = [];
let made = 0;

const counter = kit.defineResource({
  name: "counter",
  create: ({ config }) => {
    made += 1;
    const id = made;
    events.push(`create ${id}`);
    // Typed from the kit's env schema: a number, no cast.
    return { id, value: config.COUNTER_START, closed: false };
  },
  close: (c) => {
    c.closed = true;
    events.push(`close ${c.id}`);
  },
});

const second = kit.defineResource({
  name: "second",
  create: () => ({ id: "second" }),
  close: () => {
    events.push("close second");
  },
});

const count = kit.defineTool({
  name: "count",
  summary: "Adds one to this runtime's counter.",
  input: {},
  output: { id: z.number().int().describe("which counter"), value: z.number().int().describe("its value now") },
  example: {},
  view: () => ({}),
  summarize: (r) => `counter ${r.id} at ${r.value}`,
  async handler(_input, ctx) {
    const c = ctx.use(counter);
    c.value += 1;
    return { id: c.id, value: c.value };
  },
});

const server = kit.defineServer({ package: demoPackage, instructions: "Counts.", tools: [count] });

afterEach(() => {
  events.length = 0;
  vi.useRealTimers();
});

describe("runtime resources", () => {
  it("are made on first use, one per runtime: two runtimes never share one", async () => {
    const a = testRuntime(server, { env: { COUNTER_START: "10" } });
    const b = testRuntime(server);
    expect(events).toEqual([]);
    expect(await callTool(server, count, {}, { runtime: a })).toMatchObject({ value: 11 });
    expect(await callTool(server, count, {}, { runtime: a })).toMatchObject({ value: 12 });
    expect(await callTool(server, count, {}, { runtime: b })).toMatchObject({ value: 1 });
    expect(a.use(counter)).not.toBe(b.use(counter));
    expect(a.use(counter).id).not.toBe(b.use(counter).id);
    await Promise.all([a.close(), b.close()]);
  });

  it("close with their runtime, latest first, once; then the runtime refuses them", async () => {
    const a = testRuntime(server);
    const c = a.use(counter);
    a.use(second);
    const closing = a.close();
    expect(a.close()).toBe(closing);
    await closing;
    await a.close();
    expect(c.closed).toBe(true);
    expect(events.filter((e) => e.startsWith("close"))).toEqual(["close second", `close ${c.id}`]);
    expect(a.closing.aborted).toBe(true);
    expect(thrown(() => a.use(counter))).toMatchObject({ code: "E_BUSY" });
    await expect(callTool(server, count, {}, { runtime: a })).rejects.toMatchObject({ code: "E_BUSY" });
  });

  it("a create that throws keeps nothing: the next use tries again", async () => {
    let fail = true;
    const flaky = kit.defineResource({
      name: "flaky",
      create: () => {
        if (fail) throw new Error("not yet");
        return { ok: true };
      },
    });
    const a = testRuntime(server);
    expect(thrown(() => a.use(flaky))).toMatchObject({ message: "not yet" });
    fail = false;
    expect(a.use(flaky)).toEqual({ ok: true });
    await a.close();
  });

  it("a close hook that throws or hangs is logged and the others still close, within RESOURCE_CLOSE_MS", async () => {
    vi.useFakeTimers();
    const warnings: string[] = [];
    const broken = kit.defineResource({
      name: "broken",
      create: () => ({}),
      close: () => {
        throw new Error("boom");
      },
    });
    const hanging = kit.defineResource({ name: "hanging", create: () => ({}), close: () => new Promise(() => {}) });
    const log = pino({ level: "warn" }, { write: (line: string) => void warnings.push(JSON.parse(line).msg) });
    const a = testRuntime(server, { logger: log });
    const c = a.use(counter);
    a.use(broken);
    a.use(hanging);
    let done = false;
    const closing = a.close().then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(RESOURCE_CLOSE_MS - 1);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await closing;
    expect(c.closed).toBe(true);
    expect(warnings).toEqual(["resource still closing", "resource did not close cleanly"]);
  });

  it("callTool closes the fresh runtime it made, and leaves a runtime the test keeps open", async () => {
    await callTool(server, count, {});
    expect(events).toEqual([`create ${made}`, `close ${made}`]);
    events.length = 0;
    const kept = testRuntime(server);
    await callTool(server, count, {}, { runtime: kept });
    expect(events).toEqual([`create ${made}`]);
    await kept.close();
  });

  it("HTTP: closing the app closes its runtime's resources", async () => {
    const runtime = testRuntime(server);
    const app = await buildHttpApp(runtime);
    const res = await app.inject({ method: "POST", url: "/actions/count", payload: {} });
    expect(res.json()).toMatchObject({ value: 1 });
    expect(events).toEqual([`create ${made}`]);
    await app.close();
    expect(events).toEqual([`create ${made}`, `close ${made}`]);
  });
});

describe("SharedCalls.close", () => {
  it("stops the work in flight, waits for it to settle, and refuses new work", async () => {
    const calls = createSharedCalls();
    let stoppedWith: unknown;
    const work = calls.run("k", undefined, 0, (signal) => {
      return new Promise((_, reject) => {
        signal.addEventListener("abort", () => {
          stoppedWith = signal.reason;
          reject(signal.reason);
        });
      });
    });
    const joined = calls.run("k", undefined, 0, async () => "never runs");
    await calls.close();
    expect(stoppedWith).toMatchObject({ code: "E_BUSY" });
    await expect(work).rejects.toMatchObject({ code: "E_BUSY" });
    await expect(joined).rejects.toMatchObject({ code: "E_BUSY" });
    await expect(calls.run("k", undefined, 0, async () => 1)).rejects.toMatchObject({ code: "E_BUSY" });
  });
});
