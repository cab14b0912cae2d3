/**
 * The ports server as an MCP client sees it, through the official SDK client: over Streamable HTTP at /mcp and
 * over stdio (`main.js --stdio`). Every tool is listed with its schemas and annotations, and called against a
 * child this test starts (its command line carries secrets: masked on MCP too).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { openMcp } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOLDER_CMD, type Holder, leakedSecrets, startHolder } from "./helpers/holder.ts";

const TOOLS = ["listening_sockets", "who_uses_port", "process_info"];

let holder: Holder;
let port: number;

beforeAll(async () => {
  holder = await startHolder([
    { proto: "tcp6", host: "::", port: 0 },
    { proto: "udp", host: "127.0.0.1", port: "same" },
  ]);
  port = holder.sockets[0]?.port as number;
});

afterAll(async () => {
  await holder?.stop();
});

async function exercise(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
  for (const tool of tools) {
    expect(tool.description?.length).toBeGreaterThan(10);
    expect(tool.annotations?.readOnlyHint).toBe(true);
    expect(tool.annotations?.openWorldHint).toBe(false);
    expect(tool.inputSchema.type).toBe("object");
    expect(tool.inputSchema.properties).toHaveProperty("timeout_ms");
    expect(tool.outputSchema?.properties).toHaveProperty("summary");
  }
  const calls: Record<string, Record<string, unknown>> = {
    listening_sockets: { limit: 500 },
    who_uses_port: { port },
    process_info: { pid: holder.pid },
  };
  const results: Record<string, Record<string, unknown>> = {};
  for (const name of TOOLS) {
    const result = await client.callTool({ name, arguments: { ...calls[name], run_id: `mcp-${name}` } });
    expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeFalsy();
    const structured = result.structuredContent as Record<string, unknown>;
    expect(typeof structured.summary).toBe("string");
    expect(structured.run_id).toBe(`mcp-${name}`);
    // The text copy carries no secret either.
    expect(leakedSecrets([structured, result.content])).toEqual([]);
    results[name] = structured;
  }
  expect(
    ((results.listening_sockets?.sockets ?? []) as Array<Record<string, unknown>>).filter((s) => s.port === port),
  ).toEqual([
    { proto: "tcp6", local: `[::]:${port}`, port, pid: holder.pid, process: "node", holders: 1 },
    { proto: "udp", local: `127.0.0.1:${port}`, port, pid: holder.pid, process: "node", holders: 1 },
  ]);
  expect(results.who_uses_port).toMatchObject({
    port,
    in_use: true,
    pids: [
      {
        pid: holder.pid,
        process: "node",
        cmd: HOLDER_CMD,
        sockets: [
          { proto: "tcp6", local: `[::]:${port}` },
          { proto: "udp", local: `127.0.0.1:${port}` },
        ],
      },
    ],
    unowned: [],
  });
  expect(results.process_info).toMatchObject({ processes: [{ pid: holder.pid, name: "node", cmd: HOLDER_CMD }] });
  // A bad call is an isError result carrying our code.
  const bad = await client.callTool({ name: "who_uses_port", arguments: { port: "80" } });
  expect(bad.isError).toBe(true);
  expect(JSON.parse((bad.content as Array<{ text: string }>)[0]?.text ?? "{}").error.code).toBe("E_INVALID_INPUT");
}

describe.each(["http", "stdio"] as const)("MCP over %s", (transport) => {
  it("lists and calls every tool; only protocol on stdout, JSON logs apart", async () => {
    const mcp = await openMcp(transport, "ports", { env: {} });
    try {
      await exercise(mcp.client);
      for (const line of mcp.logLines()) expect(() => JSON.parse(line)).not.toThrow();
    } finally {
      await mcp.close();
    }
  });
});
