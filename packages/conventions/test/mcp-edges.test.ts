/**
 * The edges of the MCP surface: batches refused, malformed JSON is −32700, malformed params are a clean
 * −32602 carrying our code (never a zod dump), over HTTP; over stdio the same, plus an oversized line that
 * gets an error and a closed stdout that ends the process quietly.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/http/http-app.ts";
import { silentLogger } from "../src/testing/silent-logger.ts";
import { demoServer } from "./fixtures/demo-server.ts";

let app: FastifyInstance;
beforeAll(async () => {
  app = await buildApp(demoServer, { env: {}, logger: silentLogger() });
});
afterAll(() => app.close());

const mcp = (payload: string) =>
  app.inject({
    method: "POST",
    url: "/mcp",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    payload,
  });

/** No trace of zod's own output or a stack anywhere in the answer. */
function expectClean(text: string): void {
  for (const leak of ["ZodError", '"issues"', "invalid_type", "    at ", "expected_values"])
    expect(text).not.toContain(leak);
}

const INIT = {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "t", version: "1" },
};

describe("MCP over HTTP: clean edges", () => {
  it("a batch is refused with one JSON-RPC error; an empty batch too", async () => {
    for (const body of [JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "tools/list" }]), "[]"]) {
      const res = await mcp(body);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, data: { code: "E_INVALID_INPUT" } },
      });
      expect(res.json().error.message).toMatch(/batch/);
    }
  });

  it("a body that is not JSON is 415, as the SDK's transport answers it", async () => {
    const res = await app.inject({
      method: "POST",
      url: "/mcp",
      headers: { "content-type": "text/plain", accept: "application/json, text/event-stream" },
      payload: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(res.statusCode).toBe(415);
    expect(res.json().error.message).toMatch(/^Unsupported Media Type/);
  });

  it("malformed JSON is a JSON-RPC −32700, not the REST error body", async () => {
    const res = await mcp('{"jsonrpc":"2.0","id":1,"method":');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32700, data: { code: "E_INVALID_INPUT" } },
    });
    expect(res.json().error.message).toMatch(/^Parse error/);
  });

  it.each([
    ["arguments as an array", { name: "echo_name", arguments: ["x"] }, /params\.arguments/],
    ["a numeric name", { name: 42, arguments: {} }, /params\.name/],
    ["no params at all", undefined, /params/],
  ])("tools/call with %s: −32602 naming the field, with our code", async (_label, params, field) => {
    const res = await mcp(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params }));
    const body = res.json();
    expect(body).toMatchObject({ jsonrpc: "2.0", id: 7, error: { code: -32602, data: { code: "E_INVALID_INPUT" } } });
    expect(body.error.message).toMatch(field);
    expectClean(res.body);
  });

  it.each([
    [{ jsonrpc: "2.0", id: null, method: "ping" }, "id must be a string or a number"],
    [{ jsonrpc: "2.0", id: {}, method: "ping" }, "id must be a string or a number"],
    [{ jsonrpc: "1.0", id: 1, method: "ping" }, 'jsonrpc must be "2.0"'],
  ])("a malformed envelope says what is wrong: %j", async (message, says) => {
    const res = await mcp(JSON.stringify(message));
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: -32600, message: `not a JSON-RPC 2.0 message: ${says}` });
  });

  it("initialize without params: −32602, clean", async () => {
    const res = await mcp(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize" }));
    expect(res.json()).toMatchObject({ id: 1, error: { code: -32602, data: { code: "E_INVALID_INPUT" } } });
    expectClean(res.body);
  });

  it("a valid initialize still works, and declares only the tools capability", async () => {
    const res = await mcp(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT }));
    expect(res.json().result.capabilities).toEqual({ tools: {} });
  });
});

describe("MCP over stdio: clean edges", () => {
  let child: ChildProcess;
  let lines: string[];
  const next = async (count: number): Promise<Array<Record<string, unknown>>> => {
    for (let i = 0; i < 100 && lines.length < count; i++) await new Promise((r) => setTimeout(r, 50));
    return lines.splice(0, count).map((l) => JSON.parse(l));
  };

  beforeAll(async () => {
    const { serverEntry } = await import("@roadnerd/testkit");
    child = spawn(process.execPath, [serverEntry("network"), "--stdio"], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LOG_LEVEL: "silent" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    lines = [];
    let buf = "";
    child.stdout?.on("data", (d: Buffer) => {
      buf += d.toString();
      const parts = buf.split("\n");
      buf = parts.pop() ?? "";
      lines.push(...parts.filter(Boolean));
    });
  });
  afterAll(() => {
    if (child.exitCode === null) child.kill("SIGKILL");
  });

  it("an oversized line gets −32600 and the session goes on", async () => {
    child.stdin?.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(70_000) } })}\n`,
    );
    child.stdin?.write(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "initialize", params: INIT })}\n`);
    const [big, init] = await next(2);
    expect(big).toMatchObject({ id: null, error: { code: -32600, data: { code: "E_TOO_LARGE" } } });
    expect(JSON.stringify(big)).toMatch(/larger than 65536 bytes/);
    expect(init).toMatchObject({ id: 2, result: { serverInfo: { name: "roadnerd-network" } } });
  });

  it("a line that is not JSON gets −32700; malformed params a clean −32602", async () => {
    child.stdin?.write("{not json\n");
    child.stdin?.write(`${JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: [] } })}\n`);
    const [parse, params] = await next(2);
    expect(parse).toMatchObject({ id: null, error: { code: -32700 } });
    expect(params).toMatchObject({ id: 3, error: { code: -32602, data: { code: "E_INVALID_INPUT" } } });
    expectClean(JSON.stringify(params));
  });

  it("a closed stdout ends the process quietly with exit code 0", async () => {
    let stderr = "";
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdout?.destroy();
    child.stdin?.write(`${JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/list" })}\n`);
    const [code] = (await once(child, "exit")) as [number | null];
    expect(code).toBe(0);
    expect(stderr).not.toMatch(/EPIPE|Error:| {4}at /);
  });
});

describe("stdio: requests piped in and stdin closed", () => {
  it("tools/call before initialize is refused (−32600), not served; after initialize it is", async () => {
    const { PassThrough } = await import("node:stream");
    const { LineTransport } = await import("../src/mcp/stdio.ts");
    const { createMcpServer } = await import("../src/mcp/adapter.ts");
    const { testRuntime } = await import("../src/testing/inject.ts");
    const input = new PassThrough();
    const output = new PassThrough();
    const lines: string[] = [];
    output.on("data", (d: Buffer) => lines.push(...d.toString().split("\n").filter(Boolean)));
    const transport = new LineTransport(input, output, 65_536);
    const closed = new Promise<void>((resolve) => {
      transport.onclose = () => resolve();
    });
    await createMcpServer(testRuntime(demoServer)).connect(transport);
    const call = { name: "echo_name", arguments: { name: "example.com" } };
    input.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: call })}\n`);
    input.write(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "initialize", params: INIT })}\n`);
    input.end(`${JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: call })}\n`);
    await closed;
    const answers = lines.map((l) => JSON.parse(l) as { id?: number; error?: { code: number; data?: unknown } });
    expect(answers.find((a) => a.id === 1)?.error).toMatchObject({ code: -32600, data: { code: "E_INVALID_INPUT" } });
    expect(answers.find((a) => a.id === 3)?.error).toBeUndefined();
  });

  it("every request already read is answered before the transport closes", async () => {
    const { PassThrough } = await import("node:stream");
    const { LineTransport } = await import("../src/mcp/stdio.ts");
    const { createMcpServer } = await import("../src/mcp/adapter.ts");
    const { testRuntime } = await import("../src/testing/inject.ts");
    const input = new PassThrough();
    const output = new PassThrough();
    const lines: string[] = [];
    output.on("data", (d: Buffer) => lines.push(...d.toString().split("\n").filter(Boolean)));
    const transport = new LineTransport(input, output, 65_536);
    const closed = new Promise<void>((resolve) => {
      transport.onclose = () => resolve();
    });
    await createMcpServer(testRuntime(demoServer)).connect(transport);
    input.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT })}\n`);
    input.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
    const call = { name: "sleepy", arguments: { ms: 200 } };
    input.end(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: call })}\n`);
    await closed;
    const answers = lines.map((l) => JSON.parse(l) as { id?: number; result?: { structuredContent?: unknown } });
    expect(answers.map((a) => a.id)).toEqual([1, 2]);
    expect(answers[1]?.result?.structuredContent).toEqual({ waited: 200, summary: "waited 200" });
  });
});
