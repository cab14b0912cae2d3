/**
 * The MCP gateway with the official SDK client: over Streamable HTTP (in-process gateway, real attached
 * servers) and over stdio (the built `roadnerd mcp` bin). It lists every server's tools plus triage, and a
 * call to a server that was not running attaches it.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { request } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { REPO_ROOT, readRegistry } from "@roadnerd/registry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Attacher } from "../src/attach.ts";
import { type Catalog, loadCatalog } from "../src/catalog.ts";
import { mcpName } from "../src/gateway.ts";
import { type GatewayHttp, serveGatewayHttp } from "../src/gateway-http.ts";
import { RulesPlanner } from "../src/planners/rules.ts";

let catalog: Catalog;

beforeAll(async () => {
  catalog = await loadCatalog();
});

describe("gateway over Streamable HTTP", () => {
  let attacher: Attacher;
  let gateway: GatewayHttp;
  let client: Client;
  let logDir: string;

  beforeAll(async () => {
    attacher = new Attacher({ servers: readRegistry() });
    logDir = await mkdtemp(join(tmpdir(), "rn-gateway-"));
    gateway = await serveGatewayHttp({ catalog, attacher, planner: () => new RulesPlanner(), logDir });
    client = new Client({ name: "gateway-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)));
  });

  afterAll(async () => {
    await client?.close();
    await gateway?.close();
    await attacher?.close();
    if (logDir) await rm(logDir, { recursive: true, force: true });
  });

  it("lists triage and every tool of every loaded server, with MCP-valid names", async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(["triage", ...catalog.entries.map((e) => mcpName(e.id))]);
    expect(names).toContain("network__dns_resolve");
    expect(new Set(catalog.entries.map((e) => e.server)).size).toBeGreaterThanOrEqual(2);
    for (const n of names) expect(n).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    const dns = tools.find((t) => t.name === "network__dns_resolve");
    expect(dns?.annotations).toEqual({ readOnlyHint: true, openWorldHint: true });
    expect((dns?.inputSchema.required as string[] | undefined) ?? []).toContain("qname");
  });

  it("a call to a server that is not running attaches it and returns its structured result", async () => {
    expect(attacher.isRunning("network")).toBe(false);
    const r = await client.callTool({ name: "network__route_info", arguments: { run_id: "gw-1" } });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ default_gateway: null, run_id: "gw-1" });
    expect(attacher.isRunning("network")).toBe(true);
  });

  it("bad input and unknown names are isError results with our codes, nothing attached for them", async () => {
    const bad = await client.callTool({ name: "network__dns_resolve", arguments: { qname: "--x" } });
    expect(bad.isError).toBe(true);
    expect(JSON.parse((bad.content as Array<{ text: string }>)[0]?.text ?? "{}")).toMatchObject({
      error: { code: "E_INVALID_INPUT" },
    });
    const unknown = await client.callTool({ name: "network__ping", arguments: {} });
    expect(JSON.parse((unknown.content as Array<{ text: string }>)[0]?.text ?? "{}")).toMatchObject({
      error: { code: "E_UNKNOWN_TOOL" },
    });
  });

  it("near-miss names resolve as the CLI resolves them; an ambiguous or unknown one gets the closest names", async () => {
    for (const name of ["network/route_info", "network.route_info", "route_info"]) {
      const r = await client.callTool({ name, arguments: { run_id: "gw-near" } });
      expect(r.isError, name).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ default_gateway: null, run_id: "gw-near" });
    }
    // The spelling a model often uses: it reaches the tool (whatever the tool then says of port 9).
    const tcp = await client.callTool({
      name: "network/tcp_port_check",
      arguments: { host: "127.0.0.1", port: 9, timeout_ms: 15000 },
    });
    expect(JSON.stringify(tcp.content)).not.toContain("E_UNKNOWN_TOOL");
    const unknown = await client.callTool({ name: "network/ping", arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(JSON.parse((unknown.content as Array<{ text: string }>)[0]?.text ?? "{}")).toMatchObject({
      error: { code: "E_UNKNOWN_TOOL" },
    });
  });

  it("the triage tool runs the loop and answers label, reason, steps, evidence", async () => {
    const r = await client.callTool({ name: "triage", arguments: { symptom: "no internet" } });
    expect(r.structuredContent).toMatchObject({ label: "wifi", reason: "no interface is up with a carrier", steps: 2 });
  });

  it("the triage tool takes the caller's run_id into every log line and answers a category_hint", async () => {
    const r = await client.callTool({ name: "triage", arguments: { symptom: "no internet", run_id: "rn-gw.7" } });
    expect(r.structuredContent).toMatchObject({
      label: "wifi",
      run_id: "rn-gw.7",
      category_hint: expect.stringMatching(/^wifi: no interface is up with a carrier · network\/route_info: /),
    });
    const lines = (await readFile(join(logDir, "triage-rn-gw.7.jsonl"), "utf8")).trim().split("\n");
    expect(lines.map((l) => JSON.parse(l).run_id)).toEqual(["rn-gw.7", "rn-gw.7", "rn-gw.7"]);
    const bad = await client.callTool({ name: "triage", arguments: { run_id: "../../etc/x" } });
    expect(bad.isError).toBe(true);
    expect(JSON.parse((bad.content as Array<{ text: string }>)[0]?.text ?? "{}")).toMatchObject({
      error: { code: "E_INVALID_INPUT", message: expect.stringContaining("run_id") },
    });
  });

  it("served by the kernel's adapter: output schemas listed, closest names for an unknown tool, input checked", async () => {
    const { tools } = await client.listTools();
    for (const t of tools) expect(t.outputSchema?.type).toBe("object");
    const unknown = await client.callTool({ name: "network__route_inf", arguments: {} });
    const body = JSON.parse((unknown.content as Array<{ text: string }>)[0]?.text ?? "{}");
    expect(body.error).toMatchObject({ code: "E_UNKNOWN_TOOL", hint: expect.stringContaining("network__route_info") });
    const long = await client.callTool({ name: "triage", arguments: { symptom: "x".repeat(301) } });
    expect(long.isError).toBe(true);
    expect(JSON.parse((long.content as Array<{ text: string }>)[0]?.text ?? "{}")).toMatchObject({
      error: { code: "E_INVALID_INPUT", message: expect.stringContaining("triage: symptom") },
    });
  });

  it("the kernel's Streamable HTTP rules: POST only, one message per request, notifications 202", async () => {
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const get = await fetch(gateway.url);
    expect([get.status, get.headers.get("allow")]).toEqual([405, "POST"]);
    const batch = await fetch(gateway.url, { method: "POST", headers, body: "[]" });
    expect(batch.status).toBe(400);
    const notice = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" });
    expect((await fetch(gateway.url, { method: "POST", headers, body: notice })).status).toBe(202);
    const list = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const noAccept = await fetch(gateway.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: list,
    });
    expect(noAccept.status).toBe(406);
  });

  it("a foreign Host header (DNS rebinding) or a foreign browser Origin is refused", async () => {
    const url = new URL(gateway.url);
    expect(await postWith(gateway.url, { host: "evil.example" })).toBe(403);
    expect(await postWith(gateway.url, { host: url.host, origin: "http://evil.example" })).toBe(403);
    expect(await postWith(gateway.url, { host: url.host, origin: `http://${url.host}` })).toBe(200);
  });

  it("a body past 1 MiB is answered 413 at once, while the client still says more is coming", async () => {
    const url = new URL(gateway.url);
    const socket = connect(Number(url.port), "127.0.0.1");
    const answer = new Promise<string>((resolve) => {
      let text = "";
      socket.on("data", (c: Buffer) => {
        text += c.toString("latin1");
      });
      socket.on("close", () => resolve(text));
    });
    // 64 MiB announced, a little over 1 MiB sent, then nothing: the answer must not wait for the rest.
    socket.write(
      `POST /mcp HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\ncontent-length: ${64 * 1024 * 1024}\r\n\r\n`,
    );
    socket.write(Buffer.alloc(1024 * 1024 + 4096, 0x20));
    const text = await answer;
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text.toLowerCase()).toContain("connection: close");
  });
});

/** A raw POST of tools/list with these headers (undici's fetch will not send another Host). */
function postWith(url: string, extra: Record<string, string>): Promise<number | undefined> {
  return new Promise<number | undefined>((resolve, reject) => {
    const req = request(url, {
      method: "POST",
      headers: {
        ...extra,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
    });
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on("error", reject);
    req.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }));
  });
}

describe("gateway over stdio (built bin)", () => {
  it("roadnerd mcp: lists every tool and calls one on a server that was not running", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(REPO_ROOT, "packages/orchestrator/dist/main.js"), "mcp"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      stderr: "pipe",
    });
    const client = new Client({ name: "gateway-stdio-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(
        expect.arrayContaining(["triage", "network__route_info", "ports__who_uses_port"]),
      );
      const r = await client.callTool({ name: "ports__who_uses_port", arguments: { port: 9 } });
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ port: 9, in_use: false, pids: [] });
    } finally {
      await client.close();
    }
  });
});
