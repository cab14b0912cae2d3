/**
 * The service server as an MCP client sees it, through the official SDK client, against a real systemd
 * (booted by the harness): over Streamable HTTP at /mcp from a server running inside it, and over stdio
 * (`main.js --stdio` started inside it with nsenter). Every tool is listed with its schemas and annotations,
 * and called; on this machine's own root the same call is an isError result carrying E_UNSUPPORTED.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { serverEntry, spawnServer } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BootedService, bootService } from "./helpers/booted.ts";

const TOOLS = ["journal_tail", "list_failed_units", "service_status"];

const text = (r: unknown) => ((r as { content?: Array<{ text: string }> }).content ?? [])[0]?.text ?? "{}";

async function exercise(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
  for (const tool of tools) {
    expect(tool.description?.length).toBeGreaterThan(10);
    expect(tool.annotations?.readOnlyHint).toBe(true);
    expect(tool.annotations?.openWorldHint).toBe(false);
    expect(tool.inputSchema.properties).toHaveProperty("timeout_ms");
    expect(tool.outputSchema?.properties).toHaveProperty("summary");
  }
  const status = await client.callTool({ name: "service_status", arguments: { name: "rn-sleeper", run_id: "m1" } });
  expect(status.isError, text(status)).toBeFalsy();
  expect(status.structuredContent).toMatchObject({
    name: "rn-sleeper.service",
    loaded: "loaded",
    active: "active",
    sub: "running",
    description: "RoadNerd sleeper",
    run_id: "m1",
  });
  const failed = await client.callTool({ name: "list_failed_units", arguments: {} });
  expect(failed.structuredContent).toMatchObject({
    failed: [{ name: "rn-broken.service", description: "RoadNerd broken" }],
    summary: "1 failed: rn-broken.service",
  });
  const tail = await client.callTool({ name: "journal_tail", arguments: { name: "rn-logger", lines: 50 } });
  const lines = (tail.structuredContent as { lines: string[] }).lines;
  expect(lines.some((l) => / rn-logger\[\d+\]: connecting with password=\[masked\] now$/.test(l))).toBe(true);
  expect(text(tail)).not.toContain("hunter2");
  // A bad call is an isError result carrying our code; nothing ran.
  const bad = await client.callTool({ name: "service_status", arguments: { name: "--help" } });
  expect(bad.isError).toBe(true);
  expect(JSON.parse(text(bad)).error.code).toBe("E_INVALID_INPUT");
}

describe("MCP against a booted systemd", () => {
  let booted: BootedService;
  beforeAll(async () => {
    booted = await bootService();
  }, 60_000);
  afterAll(async () => {
    await booted?.stop();
  });

  it("over Streamable HTTP at /mcp: lists and calls every tool", async () => {
    const client = new Client({ name: "service-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${booted.server.url}/mcp`)));
    try {
      await exercise(client);
    } finally {
      await client.close();
    }
  });

  it("over stdio (main.js --stdio inside the booted system): only protocol on stdout, logs on stderr", async () => {
    const stderr: string[] = [];
    const [cmd, ...args] = booted.harness.nsenter;
    const transport = new StdioClientTransport({
      command: cmd as string,
      args: [...args, process.execPath, serverEntry("service"), "--stdio"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      stderr: "pipe",
    });
    transport.stderr?.on("data", (d: Buffer) => stderr.push(d.toString()));
    const client = new Client({ name: "service-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      await exercise(client);
    } finally {
      await client.close();
    }
    const logLines = stderr.join("").split("\n").filter(Boolean);
    expect(logLines.length).toBeGreaterThan(0);
    for (const line of logLines) expect(() => JSON.parse(line)).not.toThrow();
  });
});

describe("MCP on this machine's own root (systemd is not PID 1)", () => {
  it("every tool is an isError result carrying E_UNSUPPORTED", async () => {
    const server = await spawnServer("service", { env: { LOG_LEVEL: "warn" } });
    const client = new Client({ name: "service-test", version: "1.0.0" });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
      for (const [name, args] of [
        ["service_status", { name: "ssh" }],
        ["list_failed_units", {}],
        ["journal_tail", { name: "ssh" }],
      ] as const) {
        const r = await client.callTool({ name, arguments: args });
        expect(r.isError, name).toBe(true);
        expect(JSON.parse(text(r)).error).toMatchObject({
          code: "E_UNSUPPORTED",
          message: expect.stringContaining("systemd is not running as PID 1"),
        });
      }
    } finally {
      await client.close();
      await server.stop();
    }
  });
});
