/**
 * Regression: SIGTERM (app.close) dropped in-flight POST /actions and POST /mcp calls with no answer; only SSE
 * got `end`. Now a call that finishes within the grace period gets its result, and one that does not gets a
 * typed 503 E_BUSY (a JSON-RPC error with our code on /mcp), before the connection is cut. Real sockets.
 */
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { pino } from "pino";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { buildHttpApp } from "../src/http/http-app.ts";
import { SHUTDOWN_GRACE_MS } from "../src/http/in-flight.ts";
import type { Logger } from "../src/runtime/logger.ts";
import { testRuntime } from "../src/testing/inject.ts";
import { demoServer } from "./fixtures/demo-server.ts";

async function listening(logger?: Logger) {
  const runtime = testRuntime(demoServer, logger ? { logger } : {});
  const app: FastifyInstance = await buildHttpApp(runtime);
  await app.listen({ host: "127.0.0.1", port: 0 });
  return { app, runtime, base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  request(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  }).then(async (r) => ({ status: r.statusCode, body: (await r.body.json()) as Record<string, unknown> }));

const mcpCall = (ms: number) => ({
  jsonrpc: "2.0",
  id: 7,
  method: "tools/call",
  params: { name: "sleepy", arguments: { ms, timeout_ms: 15_000 } },
});
const mcpHeaders = { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" };

describe("SIGTERM answers every call in flight", () => {
  it("a call that outlives the grace period: 503 E_BUSY on /actions, a JSON-RPC error on /mcp", async () => {
    const { app, base } = await listening();
    await post(`${base}/actions/sleepy`, { ms: 0 }); // warm: the first call compiles its schemas
    const action = post(`${base}/actions/sleepy`, { ms: SHUTDOWN_GRACE_MS * 5, timeout_ms: 15_000 });
    const mcp = post(`${base}/mcp`, mcpCall(SHUTDOWN_GRACE_MS * 5), mcpHeaders);
    await new Promise((r) => setTimeout(r, 300));
    await app.close();
    const a = await action;
    expect(a.status).toBe(503);
    expect(a.body).toMatchObject({ error: { code: "E_BUSY", message: expect.stringContaining("shutting down") } });
    const m = await mcp;
    expect(m.body).toMatchObject({ jsonrpc: "2.0", id: 7, error: { data: { code: "E_BUSY" } } });
  }, 30_000);

  // Regression: the handler finishing after its shutdown answer sent a second reply, which Fastify logged as
  // FST_ERR_REP_ALREADY_SENT (a warning with a stack, for /actions and /mcp alike).
  it("a result that comes after its shutdown answer is dropped quietly", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const { app, runtime, base } = await listening(pino<never>({ level: "info" }, sink));
    await post(`${base}/actions/sleepy`, { ms: 0 });
    const late = SHUTDOWN_GRACE_MS + 300;
    const action = post(`${base}/actions/sleepy`, { ms: late, timeout_ms: 15_000 });
    const mcp = post(`${base}/mcp`, mcpCall(late + 1), mcpHeaders); // not identical: two executions
    const started = performance.now() + 10_000;
    while (runtime.calls.active < 2 && performance.now() < started) await new Promise((r) => setTimeout(r, 20));
    await app.close();
    expect((await action).status).toBe(503);
    expect((await mcp).status).toBe(503);
    // Both handlers finish (and log "tool done") after their answers went out.
    const deadline = performance.now() + 10_000;
    while (lines.filter((l) => l.includes(`"duration_ms"`)).length < 3 && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 100));
    expect(lines.filter((l) => l.includes("tool done"))).toHaveLength(3);
    expect(lines.filter((l) => /ALREADY_SENT|reply.sent|already sent/i.test(l))).toEqual([]);
  }, 30_000);

  it("a call that finishes within the grace period gets its result", async () => {
    const { app, base } = await listening();
    await post(`${base}/actions/sleepy`, { ms: 0 }); // warm: the first call compiles its schemas
    const action = post(`${base}/actions/sleepy`, { ms: 1200 });
    await new Promise((r) => setTimeout(r, 400));
    await app.close();
    expect(await action).toMatchObject({ status: 200, body: { waited: 1200 } });
  }, 30_000);
});

/**
 * Regression: over stdio a signal ended the process at once (process.exit), so a tools/call in flight got no
 * answer at all. Now drain() answers it: its result within the grace period, else a JSON-RPC error carrying
 * E_BUSY with the request's id; a late result for that id is never sent as a second answer.
 */
describe("SIGTERM over stdio: drain() answers every request in flight", () => {
  const INIT = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } };

  async function session() {
    const { PassThrough } = await import("node:stream");
    const { serveStdioSource } = await import("../src/mcp/transports.ts");
    const { runtimeSource } = await import("../src/mcp/adapter.ts");
    const input = new PassThrough();
    const output = new PassThrough();
    const answers: Array<{ id?: number; result?: { structuredContent?: unknown }; error?: unknown }> = [];
    output.on("data", (d: Buffer) => {
      for (const line of d.toString().split("\n").filter(Boolean)) answers.push(JSON.parse(line));
    });
    const stdio = await serveStdioSource(runtimeSource(testRuntime(demoServer)), input, output);
    const send = (m: unknown) => input.write(`${JSON.stringify(m)}\n`);
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    return { stdio, send, answers };
  }

  it("a call that outlives the grace period gets E_BUSY with its id, once", async () => {
    const { stdio, send, answers } = await session();
    send({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "sleepy", arguments: { ms: 1500 } } });
    await new Promise((r) => setTimeout(r, 100));
    await stdio.drain(200);
    expect(answers.filter((a) => a.id === 7)).toEqual([
      { jsonrpc: "2.0", id: 7, error: expect.objectContaining({ data: expect.objectContaining({ code: "E_BUSY" }) }) },
    ]);
    // The handler finishing later does not answer id 7 a second time.
    await new Promise((r) => setTimeout(r, 1600));
    expect(answers.filter((a) => a.id === 7)).toHaveLength(1);
    await stdio.close();
  }, 10_000);

  it("a call that finishes within the grace period gets its result", async () => {
    const { stdio, send, answers } = await session();
    send({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "sleepy", arguments: { ms: 300 } } });
    await new Promise((r) => setTimeout(r, 50));
    await stdio.drain(SHUTDOWN_GRACE_MS);
    expect(answers.find((a) => a.id === 8)?.result?.structuredContent).toEqual({ waited: 300, summary: "waited 300" });
    await stdio.close();
  }, 10_000);
});
