/**
 * The storage server as an MCP client sees it, through the official SDK client: over Streamable HTTP at /mcp
 * and over stdio (`main.js --stdio`). Both tools listed with their schemas and annotations, and called on a
 * tree in a tmpfs mounted here.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { openMcp } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScratchMounts, scratchMounts } from "./helpers/scratch-mounts.ts";

const TOOLS = ["disk_usage", "top_consumers"];
let m: ScratchMounts;
let root: string;
let env: Record<string, string>;

beforeAll(() => {
  m = scratchMounts("rn-storage-mcp-");
  root = m.tmpfs(join(m.base, "root"), "size=16m,nr_inodes=1000");
  mkdirSync(join(root, "logs"));
  writeFileSync(join(root, "logs/big.log"), Buffer.alloc(3 * 1024 * 1024, 1));
  writeFileSync(join(root, "small"), Buffer.alloc(4096, 1));
  env = { STORAGE_ROOTS: root };
});

afterAll(() => m?.cleanup());

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
  const du = await client.callTool({ name: "disk_usage", arguments: { run_id: "mcp-du" } });
  expect(du.isError, JSON.stringify(du.content)).toBeFalsy();
  const mounts = (du.structuredContent as { mounts: Array<Record<string, unknown>>; run_id: string }).mounts;
  expect(mounts.find((x) => x.mount === root)).toMatchObject({
    fs: "tmpfs",
    used_gb: 0.003,
    used_pct: 19, // ⌈100 × (3 MiB + 4 KiB) / 16 MiB⌉ = ⌈18.77⌉
    inodes_total: 1000,
    inodes_used: 4,
  });
  const top = await client.callTool({ name: "top_consumers", arguments: { path: root, n: 2, run_id: "mcp-top" } });
  expect(top.structuredContent).toMatchObject({
    path: root,
    entries: [
      { name: "logs", type: "dir", size_mb: 3 },
      { name: "logs/big.log", type: "file", size_mb: 3 },
    ],
    truncated: false,
    run_id: "mcp-top",
  });
  // Refusals are isError results carrying our code.
  const outside = await client.callTool({ name: "top_consumers", arguments: { path: "/etc" } });
  expect(outside.isError).toBe(true);
  expect(JSON.parse((outside.content as Array<{ text: string }>)[0]?.text ?? "{}").error.code).toBe("E_FORBIDDEN");
  const bad = await client.callTool({ name: "top_consumers", arguments: { path: root, depth: 99 } });
  expect(bad.isError).toBe(true);
  expect(JSON.parse((bad.content as Array<{ text: string }>)[0]?.text ?? "{}").error.code).toBe("E_INVALID_INPUT");
}

describe.each(["http", "stdio"] as const)("MCP over %s", (transport) => {
  it("lists and calls every tool; only protocol on stdout, JSON logs apart", async () => {
    const mcp = await openMcp(transport, "storage", { env });
    try {
      await exercise(mcp.client);
      for (const line of mcp.logLines()) expect(() => JSON.parse(line)).not.toThrow();
    } finally {
      await mcp.close();
    }
  });
});
