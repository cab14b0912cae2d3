/**
 * The relay's plumbing against a fake server on 127.0.0.1:0 (real sockets), through the attacher's call path:
 * progress events handed on in order and the `message` the result; an `error` event the server's own code; a
 * stream with no result E_ATTACH; a stream that never ends E_TIMEOUT soon after timeout_ms; a caller that
 * cancels closes the server's stream. And which arguments stay on POST /actions (streamQuery).
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import { readRegistry } from "@roadnerd/registry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ANSWER_MARGIN_MS, Attacher } from "../src/attach.ts";
import { streamQuery } from "../src/relay-progress.ts";

let server: Server;
let url: string;
let attacher: Attacher;
/** Resolves when the server sees the `hang` stream's connection close. */
let hangClosed: Promise<void>;
let onHangClosed: () => void = () => {};

const event = (res: ServerResponse, name: string, data: unknown) =>
  res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);

beforeAll(async () => {
  hangClosed = new Promise((resolve) => {
    onHangClosed = resolve;
  });
  server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (path === "/healthz") return void res.end(JSON.stringify({ ok: true, name: "storage", version: "x" }));
    res.writeHead(200, { "content-type": "text/event-stream" });
    if (path === "/sse/ok") {
      event(res, "ping", { t: 1 });
      for (const files of [10, 20, 30]) event(res, "progress", { dirs: 1, files, bytes: 0 });
      event(res, "message", { echo: new URL(req.url ?? "", "http://x").searchParams.get("path") });
      event(res, "end", { reason: "done" });
      return void res.end();
    }
    if (path === "/sse/fails") {
      event(res, "error", { code: "E_NOT_FOUND", message: "no such directory", hint: "check the path" });
      event(res, "end", { reason: "error" });
      return void res.end();
    }
    if (path === "/sse/flood") {
      // One event that never completes: 5 MiB of data with no blank line.
      res.write("event: message\ndata: ");
      for (let i = 0; i < 5; i++) res.write("x".repeat(1024 * 1024));
      return;
    }
    if (path === "/sse/empty") {
      event(res, "end", { reason: "done" });
      return void res.end();
    }
    // /sse/hang: one progress, then nothing until the client goes.
    event(res, "progress", { files: 1 });
    res.once("close", () => onHangClosed());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  attacher = new Attacher({ servers: readRegistry(), remote: new Map([["storage", { url }]]) });
});

afterAll(async () => {
  await attacher.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const relayed = (tool: string, params: Record<string, unknown>, signal?: AbortSignal) => {
  const seen: Array<Record<string, unknown>> = [];
  const query = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)]));
  const call = attacher.call("storage", tool, params, {
    ...(signal ? { signal } : {}),
    relay: { query, onProgress: (p) => seen.push(p) },
  });
  return { seen, call };
};

describe("a relayed call", () => {
  it("hands on each progress event in order and returns the message", async () => {
    const { seen, call } = relayed("ok", { path: "/tmp/a b&c" });
    expect((await call).result).toEqual({ echo: "/tmp/a b&c" });
    expect(seen.map((p) => p.files)).toEqual([10, 20, 30]);
  });

  it("an error event is the server's code, message and hint", async () => {
    await expect(relayed("fails", {}).call).rejects.toMatchObject({
      code: "E_NOT_FOUND",
      message: "no such directory",
      hint: "check the path",
    });
  });

  it("a stream with neither result nor error is E_ATTACH, not E_INTERNAL", async () => {
    await expect(relayed("empty", {}).call).rejects.toMatchObject({ code: "E_ATTACH" });
  });

  it("an endless event is cut off at MAX_EVENT_BYTES: E_ATTACH, as an answer past MAX_ANSWER_BYTES", async () => {
    // A deadline far past the cut, so only the cap can end it.
    await expect(relayed("flood", { timeout_ms: 15_000 }).call).rejects.toMatchObject({
      code: "E_ATTACH",
      message: /MiB/,
    });
  });

  it("a stream that never ends: E_TIMEOUT after timeout_ms and the margin", async () => {
    const started = performance.now();
    await expect(relayed("hang", { timeout_ms: 100 }).call).rejects.toMatchObject({ code: "E_TIMEOUT" });
    expect(performance.now() - started).toBeGreaterThanOrEqual(100 + ANSWER_MARGIN_MS - 50);
  });

  it("the caller cancels: the server's stream is closed", async () => {
    hangClosed = new Promise((resolve) => {
      onHangClosed = resolve;
    });
    const cancel = new AbortController();
    const { seen, call } = relayed("hang", { timeout_ms: 60_000 }, cancel.signal);
    const failed = call.catch((e: unknown) => e);
    // Cancelled once the first progress came through: the stream is under way.
    for (let i = 0; i < 200 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(seen).toHaveLength(1);
    cancel.abort();
    expect(await failed).toBeInstanceOf(Error);
    await hangClosed;
  });
});

describe("streamQuery", () => {
  const schema = z.strictObject({
    path: z.string(),
    n: z.number().optional(),
    deep: z.boolean().optional(),
    only: z.array(z.string()).optional(),
    label: z.string().nullable().optional(),
  });

  it("carries strings, numbers, booleans and arrays as the server reads them back", () => {
    expect(streamQuery(schema, { path: "/var/log", n: 3, deep: true, only: ["a", "b"] })).toEqual({
      path: "/var/log",
      n: "3",
      deep: "true",
      only: '["a","b"]',
    });
  });

  it("leaves on POST /actions what a query string would change (null, a number that is not plain decimal)", () => {
    expect(streamQuery(schema, { path: "/x", label: null })).toBeUndefined();
    expect(streamQuery(schema, { path: "/x", n: 1e21 })).toBeUndefined();
  });
});
