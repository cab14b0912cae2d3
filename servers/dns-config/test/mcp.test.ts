/**
 * DnsConfig as an MCP client sees it, through the official SDK client: over Streamable HTTP at /mcp and over
 * stdio (`main.js --stdio`), the built server reading a root this test builds (systemd-resolved's stub layout).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { openMcp } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BuiltRoot, buildRoot } from "./helpers/build-root.ts";
import { layouts } from "./helpers/layouts.ts";

const TOOLS = ["dns_config_get", "resolved_status"];

let root: BuiltRoot;
beforeAll(async () => {
  root = await buildRoot(layouts.resolvedStub);
});
afterAll(async () => {
  await root?.remove();
});

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
  const get = await client.callTool({ name: "dns_config_get", arguments: { run_id: "mcp-get" } });
  expect(get.isError, JSON.stringify(get.content)).toBeFalsy();
  expect(get.structuredContent).toMatchObject({
    mode: "resolved",
    servers: ["192.0.2.53", "2001:db8::53"],
    search: ["corp.example", "lab.test"],
    stub: ["127.0.0.53"],
    managed_by: "systemd-resolved",
    run_id: "mcp-get",
  });
  const status = await client.callTool({ name: "resolved_status", arguments: {} });
  expect(status.structuredContent).toMatchObject({ installed: true, running: true, config_files: [] });
  const bad = await client.callTool({ name: "dns_config_get", arguments: { path: "/etc/shadow" } });
  expect(bad.isError).toBe(true);
  expect(JSON.parse((bad.content as Array<{ text: string }>)[0]?.text ?? "{}").error.code).toBe("E_INVALID_INPUT");
}

describe.each(["http", "stdio"] as const)("MCP over %s", (transport) => {
  it("lists and calls every tool; only protocol on stdout, JSON logs apart", async () => {
    const mcp = await openMcp(transport, "dns-config", { env: root.env });
    try {
      await exercise(mcp.client);
      for (const line of mcp.logLines()) expect(() => JSON.parse(line)).not.toThrow();
    } finally {
      await mcp.close();
    }
  });
});
