/**
 * MCP notifications/progress: the reporter (rate, order, the last report, nothing after finish) with a clock
 * we control, and the /mcp route as the SDK's client and a plain HTTP client meet it: a tools/call with a
 * progressToken is answered as an SSE stream of notifications then the result; without one, plain JSON.
 */
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyInstance } from "fastify";
import { request } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { buildApp } from "../src/http/http-app.ts";
import { SHUTDOWN_GRACE_MS } from "../src/http/in-flight.ts";
import { type ProgressParams, progressReporter, progressTokenOf } from "../src/mcp/progress.ts";
import { silentLogger } from "../src/testing/silent-logger.ts";
import { demoServer } from "./fixtures/demo-server.ts";

/** The JSON of each `message` event of an SSE body; a comment (`: …`) is no event. */
function sseMessages(text: string): Array<Record<string, unknown>> {
  return text
    .split("\n\n")
    .filter((e) => e && !e.startsWith(":"))
    .map((e) => {
      expect(e).toMatch(/^event: message\ndata: /);
      return JSON.parse(e.slice(e.indexOf("data: ") + 6));
    });
}

describe("progressReporter", () => {
  afterEach(() => vi.useRealTimers());

  it("sends at most one notification per interval, keeps the latest report, and sends it when the interval ends", () => {
    vi.useFakeTimers();
    const sent: ProgressParams[] = [];
    const r = progressReporter("tok", (p) => sent.push(p), 100);
    r.report({ dirs: 1, files: 10 });
    expect(sent).toEqual([{ progressToken: "tok", progress: 1, message: "dirs 1, files 10" }]);
    for (let i = 2; i <= 50; i++) {
      vi.advanceTimersByTime(1);
      r.report({ dirs: i, files: i * 10 });
    }
    // 49 reports within 49 ms: none sent yet, the latest kept.
    expect(sent).toHaveLength(1);
    vi.advanceTimersByTime(60);
    expect(sent).toHaveLength(2);
    expect(sent[1]).toEqual({ progressToken: "tok", progress: 2, message: "dirs 50, files 500" });
    vi.advanceTimersByTime(1000);
    expect(sent).toHaveLength(2);
  });

  it("finish sends the report still kept, then nothing more: not a later report, not a timer", () => {
    vi.useFakeTimers();
    const sent: ProgressParams[] = [];
    const r = progressReporter(7, (p) => sent.push(p), 100);
    r.report({ message: "first" });
    r.report({ message: "last one" });
    r.finish();
    r.report({ message: "after the result" });
    vi.advanceTimersByTime(1000);
    expect(sent.map((p) => [p.progress, p.message])).toEqual([
      [1, "first"],
      [2, "last one"],
    ]);
  });

  it("takes a report's own increasing progress and total; one that does not increase becomes one more", () => {
    const sent: ProgressParams[] = [];
    const r = progressReporter("t", (p) => sent.push(p), 0);
    r.report({ progress: 5, total: 10, message: "five" });
    r.report({ progress: 3, total: 10, message: "three?" });
    r.report({ progress: 20, total: 10 });
    expect(sent).toEqual([
      { progressToken: "t", progress: 5, total: 10, message: "five" },
      { progressToken: "t", progress: 6, total: 10, message: "three?" },
      // A total below the progress is not a total.
      { progressToken: "t", progress: 20 },
    ]);
  });

  it("a message is one short line", () => {
    const sent: ProgressParams[] = [];
    const r = progressReporter("t", (p) => sent.push(p), 0);
    r.report({ message: `a\nb ${"x".repeat(300)}` });
    expect(sent[0]?.message).toMatch(/^a b x+…$/);
    expect(sent[0]?.message?.length).toBe(120);
  });

  it("a progressToken is a string or an integer", () => {
    expect(progressTokenOf({ progressToken: "a" })).toBe("a");
    expect(progressTokenOf({ progressToken: 3 })).toBe(3);
    expect(progressTokenOf({ progressToken: 1.5 })).toBeUndefined();
    expect(progressTokenOf({ progressToken: null })).toBeUndefined();
    expect(progressTokenOf(undefined)).toBeUndefined();
  });
});

describe("progress over /mcp (Streamable HTTP)", () => {
  let app: FastifyInstance;
  let base: string;
  let client: Client;
  const clientErrors: Error[] = [];

  beforeAll(async () => {
    app = await buildApp(demoServer, { env: {}, logger: silentLogger() });
    await app.listen({ host: "127.0.0.1", port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    client = new Client({ name: "progress-test", version: "1.0.0" });
    client.onerror = (e) => clientErrors.push(e);
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
  });
  afterAll(async () => {
    await client.close();
    await app.close();
  });

  it("the SDK client's onprogress gets the tool's report before the result", async () => {
    const seen: Array<Progress | "result"> = [];
    const result = await client.callTool({ name: "sleepy", arguments: { ms: 200 } }, undefined, {
      onprogress: (p) => seen.push(p),
    });
    seen.push("result");
    expect(result.structuredContent).toMatchObject({ waited: 200 });
    expect(seen).toEqual([{ progress: 1, message: "waited_so_far 100" }, "result"]);
    expect(clientErrors).toEqual([]);
  });

  it("without a progressToken: a JSON answer and no notification", async () => {
    const result = await client.callTool({ name: "sleepy", arguments: { ms: 100 } });
    expect(result.structuredContent).toMatchObject({ waited: 100 });
    // A notification with no token the client knows would be reported here.
    expect(clientErrors).toEqual([]);
  });

  const post = (body: unknown) =>
    request(`${base}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify(body),
    });

  it("a plain HTTP client reads an SSE stream: the notification, then the result, then the end", async () => {
    const res = await post({
      jsonrpc: "2.0",
      id: 9,
      method: "tools/call",
      params: { name: "sleepy", arguments: { ms: 100 }, _meta: { progressToken: "p-9" } },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/event-stream/);
    const text = await res.body.text();
    const events = sseMessages(text);
    expect(events).toEqual([
      {
        jsonrpc: "2.0",
        method: "notifications/progress",
        params: { progressToken: "p-9", progress: 1, message: "waited_so_far 50" },
      },
      { jsonrpc: "2.0", id: 9, result: expect.objectContaining({ structuredContent: expect.anything() }) },
    ]);
  });

  it("the same call without _meta is one JSON response", async () => {
    const res = await post({
      jsonrpc: "2.0",
      id: 10,
      method: "tools/call",
      params: { name: "sleepy", arguments: { ms: 20 } },
    });
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(await res.body.json()).toMatchObject({ id: 10, result: { structuredContent: { waited: 20 } } });
  });

  it("a refused call with a progressToken is an isError result on the stream, no notification", async () => {
    const res = await post({
      jsonrpc: "2.0",
      id: 11,
      method: "tools/call",
      params: { name: "sleepy", arguments: { ms: -1 }, _meta: { progressToken: 1 } },
    });
    const events = sseMessages(await res.body.text());
    expect(events).toHaveLength(1);
    const answer = events[0];
    expect(answer).toMatchObject({ id: 11, result: { isError: true } });
    expect(JSON.stringify(answer)).toContain("E_INVALID_INPUT");
  });
});

describe("a streamed answer at shutdown", () => {
  it("a call that outlives the grace period ends its stream with the E_BUSY error, as the JSON path answers", async () => {
    const app = await buildApp(demoServer, { env: {}, logger: silentLogger() });
    await app.listen({ host: "127.0.0.1", port: 0 });
    const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/mcp`;
    const res = await request(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 12,
        method: "tools/call",
        params: {
          name: "sleepy",
          arguments: { ms: SHUTDOWN_GRACE_MS * 10, timeout_ms: 15_000 },
          _meta: { progressToken: 1 },
        },
      }),
    });
    expect(res.headers["content-type"]).toMatch(/^text\/event-stream/);
    const text = res.body.text();
    await app.close();
    const events = sseMessages(await text);
    expect(events).toEqual([
      {
        jsonrpc: "2.0",
        id: 12,
        error: { code: -32603, message: expect.stringContaining("shutting down"), data: { code: "E_BUSY" } },
      },
    ]);
  }, 30_000);
});
