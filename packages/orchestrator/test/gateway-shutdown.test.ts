/**
 * Regression (issue 18, finding 7): SIGTERM at the gateway dropped calls in flight with no answer. `close()` of
 * the HTTP gateway (what `roadnerd mcp --http` and `roadnerd up` run on a signal) cut every connection at once,
 * and `roadnerd mcp` over stdio closed its transport. Now each call in flight gets its result if it comes within
 * the grace period (2 s), else a JSON-RPC error carrying E_BUSY with its id (503 over HTTP), before the cut.
 * Real everything: the gateway, the built network server it attaches, an HTTP target that holds http_check until
 * released; for stdio the built `roadnerd mcp` bin, sent a real SIGTERM.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { SHUTDOWN_FLUSH_MS, SHUTDOWN_GRACE_MS } from "@roadnerd/conventions/internal";
import { REPO_ROOT, readRegistry } from "@roadnerd/registry";
import { pollUntil, scaledMs, unreadFullPipe } from "@roadnerd/testkit";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Attacher } from "../src/attach.ts";
import { loadCatalog } from "../src/catalog.ts";
import { serveGatewayHttp } from "../src/gateway-http.ts";
import { RulesPlanner } from "../src/planners/rules.ts";

const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-06-18",
};
const call = (id: number, url: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "network__http_check", arguments: { url, timeout_ms: 15_000 } },
});

let target: ReturnType<typeof createServer>;
let targetUrl: string;
const held = new Map<string, ServerResponse>();
let fastServed = 0;

beforeAll(async () => {
  target = createServer((req, res) => {
    if (req.url === "/warm") return void res.end("ok");
    if (req.url?.startsWith("/fast/")) {
      fastServed += 1;
      return void res.end("ok");
    }
    held.set(req.url ?? "", res);
  });
  target.listen(0, "127.0.0.1");
  await once(target, "listening");
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const res of held.values()) res.destroy();
  target?.closeAllConnections();
  await new Promise((r) => target?.close(r));
});

describe("the HTTP gateway on SIGTERM (close)", () => {
  async function gatewayWithCallInFlight(path: string) {
    const attacher = new Attacher({ servers: readRegistry() });
    const gateway = await serveGatewayHttp({
      catalog: await loadCatalog(),
      attacher,
      planner: () => new RulesPlanner(),
    });
    const warm = await request(gateway.url, {
      method: "POST",
      headers: MCP_HEADERS,
      body: JSON.stringify(call(0, `${targetUrl}/warm`)),
    });
    await warm.body.dump();
    const answer = request(gateway.url, {
      method: "POST",
      headers: MCP_HEADERS,
      body: JSON.stringify(call(41, `${targetUrl}${path}`)),
    }).then(async (r) => ({ status: r.statusCode, body: (await r.body.json()) as Record<string, unknown> }));
    await pollUntil(() => held.has(path), 20_000);
    expect(held.has(path)).toBe(true);
    return { attacher, gateway, answer };
  }

  it("a call that outlives the grace period: 503 and a JSON-RPC error with E_BUSY and its id", async () => {
    const { attacher, gateway, answer } = await gatewayWithCallInFlight("/http-late");
    const closing = gateway.close();
    const a = await answer; // before: the connection was cut, no answer at all
    expect(a.status).toBe(503);
    expect(a.body).toMatchObject({ jsonrpc: "2.0", id: 41, error: { data: { code: "E_BUSY" } } });
    await closing;
    held.get("/http-late")?.end("late");
    await attacher.close();
  }, 60_000);

  it("a call that finishes within the grace period gets its result", async () => {
    const { attacher, gateway, answer } = await gatewayWithCallInFlight("/http-soon");
    const closing = gateway.close();
    setTimeout(() => held.get("/http-soon")?.end("soon"), SHUTDOWN_GRACE_MS / 4);
    const a = await answer;
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ id: 41, result: { structuredContent: { status: 200 } } });
    await closing;
    await attacher.close();
  }, 60_000);
});

describe("roadnerd mcp (stdio) on SIGTERM", () => {
  /** The bin with initialize sent and a call in flight at the target; its answers as they come. */
  async function binWithCallInFlight(path: string) {
    const child: ChildProcess = spawn(
      process.execPath,
      [join(REPO_ROOT, "packages/orchestrator/dist/main.js"), "mcp"],
      { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, stdio: ["pipe", "pipe", "pipe"] },
    );
    const answers: Array<Record<string, unknown>> = [];
    let buffer = "";
    child.stdout?.on("data", (d: Buffer) => {
      buffer += d.toString();
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      for (const line of lines.filter(Boolean)) answers.push(JSON.parse(line));
    });
    child.stderr?.resume();
    const send = (m: unknown) => child.stdin?.write(`${JSON.stringify(m)}\n`);
    const init = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } };
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: init });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send(call(9, `${targetUrl}${path}`));
    await pollUntil(() => held.has(path), 30_000);
    expect(held.has(path)).toBe(true);
    return { child, answers, exited: once(child, "exit") as Promise<[number | null, string | null]> };
  }

  it("a call that outlives the grace period gets E_BUSY with its id, then the bin exits 0", async () => {
    const { child, answers, exited } = await binWithCallInFlight("/stdio-late");
    child.kill("SIGTERM");
    const [code] = await exited;
    expect(code).toBe(0);
    // Before: the transport closed and the process ended with no answer for id 9.
    expect(answers.filter((a) => a.id === 9)).toEqual([
      { jsonrpc: "2.0", id: 9, error: expect.objectContaining({ data: expect.objectContaining({ code: "E_BUSY" }) }) },
    ]);
    held.get("/stdio-late")?.end("late");
  }, 60_000);

  it("a call that finishes within the grace period gets its result before the exit", async () => {
    const { child, answers, exited } = await binWithCallInFlight("/stdio-soon");
    child.kill("SIGTERM");
    setTimeout(() => held.get("/stdio-soon")?.end("soon"), SHUTDOWN_GRACE_MS / 4);
    const [code] = await exited;
    expect(code).toBe(0);
    expect(answers.find((a) => a.id === 9)).toMatchObject({ result: { structuredContent: { status: 200 } } });
  }, 60_000);

  // Regression (attacker F7): a client that never reads stdout kept `roadnerd mcp` alive after SIGTERM: the
  // shutdown answers waited on a pipe that never drained. 119 answers of ~2.6 KB (each names a long URL) pass
  // stdout's high-water mark behind a full pipe; one call is held, so a shutdown answer is still to write.
  it("a client that never reads stdout: the bin still exits 0 within the grace period", async () => {
    const pipe = unreadFullPipe();
    const child: ChildProcess = spawn(
      process.execPath,
      [join(REPO_ROOT, "packages/orchestrator/dist/main.js"), "mcp"],
      {
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", MAX_CALLS: "128" },
        stdio: ["pipe", pipe.fd, "ignore"],
      },
    );
    const exited = once(child, "exit") as Promise<[number | null, string | null]>;
    try {
      const send = (m: unknown) => child.stdin?.write(`${JSON.stringify(m)}\n`);
      const init = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } };
      send({ jsonrpc: "2.0", id: 1, method: "initialize", params: init });
      send({ jsonrpc: "2.0", method: "notifications/initialized" });
      send(call(2, `${targetUrl}/warm`));
      const long = "p".repeat(1900);
      send(call(3, `${targetUrl}/unread-held`));
      for (let i = 4; i < 123; i++) send(call(i, `${targetUrl}/fast/${i}/${long}`));
      await pollUntil(() => held.has("/unread-held") && fastServed === 119, 30_000);
      expect(held.has("/unread-held")).toBe(true);
      expect(fastServed).toBe(119);
      await new Promise((r) => setTimeout(r, 200)); // the last answers queued behind the full pipe
      const stoppedAt = performance.now();
      child.kill("SIGTERM");
      // The grace period, the flush window, stopping network, stretched with the machine's load.
      const deadline = scaledMs(SHUTDOWN_GRACE_MS + SHUTDOWN_FLUSH_MS + 3_000);
      const outcome = await Promise.race([exited, new Promise((r) => setTimeout(() => r("still running"), deadline))]);
      // Before: still running.
      expect(outcome).toEqual([0, null]);
      expect(performance.now() - stoppedAt).toBeGreaterThanOrEqual(SHUTDOWN_GRACE_MS - 100);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
      pipe.close();
      held.get("/unread-held")?.end("late");
    }
  }, 90_000);
});

/**
 * Regression (attacker F6): at the HTTP gateway a tools/call streamed with progress (a progressToken: an SSE
 * answer whose 200 is already out) was cut at SIGTERM (ECONNRESET, no response) and the process took ~4 s to
 * exit. Now the stream ends with the result if it comes within the grace period, else a JSON-RPC E_BUSY with
 * the call's id, the call is cancelled towards its server, and the bin exits 0 soon after the grace period.
 */
describe("roadnerd mcp --http on SIGTERM: a call streamed with progress", () => {
  const streamed = (id: number, url: string) => {
    const c = call(id, url);
    return { ...c, params: { ...c.params, _meta: { progressToken: `p${id}` } } };
  };

  async function binWithStreamInFlight(path: string) {
    const child: ChildProcess = spawn(
      process.execPath,
      [join(REPO_ROOT, "packages/orchestrator/dist/main.js"), "mcp", "--http", "--port", "0"],
      { env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, stdio: ["ignore", "ignore", "pipe"] },
    );
    const exited = once(child, "exit") as Promise<[number | null, string | null]>;
    let stderr = "";
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    await pollUntil(() => /http:\/\/127\.0\.0\.1:\d+\/mcp/.test(stderr), 20_000);
    const url = stderr.match(/http:\/\/127\.0\.0\.1:\d+\/mcp/)?.[0];
    expect(url, stderr).toBeDefined();
    const post = (body: unknown) =>
      request(url ?? "", { method: "POST", headers: MCP_HEADERS, body: JSON.stringify(body) });
    await (await post(call(0, `${targetUrl}/warm`))).body.dump();
    const answer = post(streamed(41, `${targetUrl}${path}`)).then(async (r) => ({
      status: r.statusCode,
      text: await r.body.text().catch((e: Error) => `cut: ${e.message}`),
    }));
    await pollUntil(() => held.has(path), 20_000);
    expect(held.has(path)).toBe(true);
    return { child, exited, answer };
  }

  /** The JSON-RPC messages of an SSE body. */
  const messages = (text: string) =>
    text
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);

  it("past the grace period: the stream ends with E_BUSY and its id; the bin exits 0 soon after", async () => {
    const { child, exited, answer } = await binWithStreamInFlight("/stream-late");
    try {
      const stoppedAt = performance.now();
      child.kill("SIGTERM");
      const a = await answer;
      expect(a.status).toBe(200);
      // Before: "cut: other side closed" (no response at all).
      expect(messages(a.text).filter((m) => m.id === 41)).toEqual([
        { jsonrpc: "2.0", id: 41, error: expect.objectContaining({ data: { code: "E_BUSY" } }) },
      ]);
      const deadline = scaledMs(SHUTDOWN_GRACE_MS + SHUTDOWN_FLUSH_MS + 1_000);
      const outcome = await Promise.race([exited, new Promise((r) => setTimeout(() => r("still running"), deadline))]);
      expect(outcome).toEqual([0, null]);
      // Before: ~4 s (the cut call kept running on network, which then had to be stopped).
      expect(performance.now() - stoppedAt).toBeLessThan(deadline);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
      held.get("/stream-late")?.end("late");
    }
  }, 60_000);

  it("within the grace period: the stream ends with the result", async () => {
    const { child, exited, answer } = await binWithStreamInFlight("/stream-soon");
    try {
      child.kill("SIGTERM");
      setTimeout(() => held.get("/stream-soon")?.end("soon"), SHUTDOWN_GRACE_MS / 4);
      const a = await answer;
      expect(messages(a.text).find((m) => m.id === 41)).toMatchObject({
        result: { structuredContent: { status: 200 } },
      });
      const [code] = await exited;
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    }
  }, 60_000);
});
