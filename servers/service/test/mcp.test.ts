/**
 * The service server as an MCP client sees it, through the official SDK client, against a real systemd
 * (booted by the harness): over Streamable HTTP at /mcp from a server running inside it, and over stdio
 * (`main.js --stdio` started inside it with nsenter). Every tool is listed with its schemas and annotations,
 * and called; on this machine's own root the same call is an isError result carrying E_UNSUPPORTED.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { mcpOverHttp, mcpOverStdio, openMcp } from "@roadnerd/testkit";
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
    const mcp = await mcpOverHttp(booted.server.url);
    try {
      await exercise(mcp.client);
    } finally {
      await mcp.close();
    }
  });

  it("over stdio (main.js --stdio inside the booted system): only protocol on stdout, logs on stderr", async () => {
    const mcp = await mcpOverStdio("service", { wrap: booted.harness.nsenter });
    try {
      await exercise(mcp.client);
    } finally {
      await mcp.close();
    }
    const logLines = mcp.logLines();
    expect(logLines.length).toBeGreaterThan(0);
    for (const line of logLines) expect(() => JSON.parse(line)).not.toThrow();
  });
});

describe("MCP on this machine's own root (systemd is not PID 1)", () => {
  it("every tool is an isError result carrying E_UNSUPPORTED", async () => {
    const mcp = await openMcp("http", "service", { env: { LOG_LEVEL: "warn" } });
    try {
      for (const [name, args] of [
        ["service_status", { name: "ssh" }],
        ["list_failed_units", {}],
        ["journal_tail", { name: "ssh" }],
      ] as const) {
        const r = await mcp.client.callTool({ name, arguments: args });
        expect(r.isError, name).toBe(true);
        expect(JSON.parse(text(r)).error).toMatchObject({
          code: "E_UNSUPPORTED",
          message: expect.stringContaining("systemd is not running as PID 1"),
        });
      }
    } finally {
      await mcp.close();
    }
  });
});
