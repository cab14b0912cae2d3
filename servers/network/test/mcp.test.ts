/**
 * The network server as an MCP client sees it, through the official SDK client: over Streamable HTTP at /mcp
 * and over stdio (`main.js --stdio`). Every tool is listed with its schemas and annotations, and called.
 * All targets are on loopback (see helpers/loopback-world.ts).
 */

import type { AddressInfo } from "node:net";
import { createServer, type Server } from "node:net";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { canBind } from "@roadnerd/conventions/testing";
import { openMcp, serverEntry } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LoopbackWorld, startLoopbackWorld } from "./helpers/loopback-world.ts";

const DNS_IP = "127.53.11.1";
const TOOLS = ["iface_info", "route_info", "dns_resolve", "http_check", "tcp_port_check", "captive_portal_check"];
const OPEN_WORLD = ["dns_resolve", "http_check", "tcp_port_check", "captive_portal_check"];

const bindable = await canBind(DNS_IP, 53);
if (!bindable && process.env.CI === "true") throw new Error(`CI must be able to bind ${DNS_IP}:53 (run as root)`);

let world: LoopbackWorld;
let tcp: Server;
let tcpPort: number;

function callsFor(): Record<string, Record<string, unknown>> {
  return {
    iface_info: {},
    route_info: {},
    dns_resolve: { qname: "example.com", server: DNS_IP },
    http_check: { url: `${world.webUrl}/` },
    tcp_port_check: { host: "127.0.0.1", port: tcpPort },
    captive_portal_check: {},
  };
}

async function exercise(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
  for (const tool of tools) {
    expect(tool.description?.length).toBeGreaterThan(10);
    expect(tool.annotations?.readOnlyHint).toBe(true);
    expect(tool.annotations?.openWorldHint).toBe(OPEN_WORLD.includes(tool.name));
    expect(tool.inputSchema.type).toBe("object");
    expect(tool.inputSchema.properties).toHaveProperty("timeout_ms");
    expect(tool.outputSchema?.properties).toHaveProperty("summary");
  }
  const calls = callsFor();
  for (const name of TOOLS) {
    const result = await client.callTool({ name, arguments: { ...calls[name], run_id: `mcp-${name}` } });
    expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeFalsy();
    const structured = result.structuredContent as Record<string, unknown>;
    expect(typeof structured.summary).toBe("string");
    expect(structured.run_id).toBe(`mcp-${name}`);
  }
  // Exact values where the loopback world fixes them.
  const dns = (await client.callTool({ name: "dns_resolve", arguments: calls.dns_resolve })).structuredContent as {
    answers: Array<{ type: string; ttl: number; data: string }>;
  };
  expect(dns.answers).toEqual([expect.objectContaining({ type: "A", ttl: 300, data: "192.0.2.80" })]);
  const port = (await client.callTool({ name: "tcp_port_check", arguments: calls.tcp_port_check })).structuredContent;
  expect(port).toMatchObject({ host: "127.0.0.1", port: tcpPort, open: true });
  const http = (await client.callTool({ name: "http_check", arguments: calls.http_check })).structuredContent;
  expect(http).toMatchObject({ status: 200 });
  // The captive check asked only the loopback world's probes (see loopback-world.ts), and found no portal.
  const captive = (await client.callTool({ name: "captive_portal_check", arguments: {} })).structuredContent;
  expect(captive).toMatchObject({
    suspected: false,
    probes: [{ url: `${world.webUrl}/generate_204`, status: 204, matched: true }],
  });
  // A bad call is an isError result carrying our code.
  const bad = await client.callTool({ name: "tcp_port_check", arguments: { host: "-oProxyCommand=id", port: 22 } });
  expect(bad.isError).toBe(true);
  expect(JSON.parse((bad.content as Array<{ text: string }>)[0]?.text ?? "{}").error.code).toBe("E_INVALID_INPUT");
}

describe.skipIf(!bindable)("MCP clients list and call all six tools (needs root for port 53)", () => {
  beforeAll(async () => {
    world = await startLoopbackWorld(DNS_IP);
    tcp = createServer((s) => s.destroy());
    await new Promise<void>((r) => tcp.listen(0, "127.0.0.1", r));
    tcpPort = (tcp.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((r) => tcp?.close(() => r()));
    await world?.close();
  });

  it.each(["http", "stdio"] as const)(
    "over %s: lists and calls every tool; only protocol on stdout, JSON logs apart",
    async (transport) => {
      const mcp = await openMcp(transport, "network", { env: world.env });
      try {
        // The SDK client would fail to parse any non-protocol line on stdout; logs must be JSON elsewhere.
        await exercise(mcp.client);
        const lines = mcp.logLines();
        expect(lines.length).toBeGreaterThan(0);
        for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
      } finally {
        await mcp.close();
      }
    },
  );
});

describe("stdio: stdout carries nothing but JSON-RPC", () => {
  it("answers initialize, tools/list and a call with one JSON-RPC message per line, and exits when stdin closes", async () => {
    const { spawn } = await import("node:child_process");
    const child = spawn(process.execPath, [serverEntry("network"), "--stdio"], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LOG_LEVEL: "debug" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    const send = (msg: unknown) => child.stdin.write(`${JSON.stringify(msg)}\n`);
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "iface_info", arguments: { limit: 1 } } });
    // Bounded at 30 s: a loaded machine may take seconds to start Node and answer.
    for (let i = 0; i < 600 && stdout.split("\n").filter(Boolean).length < 3; i++)
      await new Promise((r) => setTimeout(r, 50));
    child.stdin.end();
    const code = await new Promise<number | null>((resolve) => {
      const t = setTimeout(() => {
        child.kill("SIGKILL");
        resolve(null);
      }, 30_000);
      child.once("exit", (c) => {
        clearTimeout(t);
        resolve(c);
      });
    });
    const messages = stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { jsonrpc: string; id: number; result?: Record<string, unknown> });
    expect(messages.map((m) => [m.jsonrpc, m.id])).toEqual([
      ["2.0", 1],
      ["2.0", 2],
      ["2.0", 3],
    ]);
    expect(messages[1]?.result?.tools).toHaveLength(6);
    expect(messages[2]?.result?.structuredContent).toHaveProperty("interfaces");
    expect(code).toBe(0);
  });
});
