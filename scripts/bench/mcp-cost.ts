/**
 * MCP against the plain surface, same server, same call: p50 of sequential calls and throughput at 16
 * connections (autocannon), interleaved. And tools/list: bytes per tool as served, against the full
 * schemas (what the list carried before) and the 1.2 KB per tool a small model's context can afford.
 */
import type { AnyTool } from "@roadnerd/conventions";
import { inputJsonSchema, outputJsonSchema } from "@roadnerd/conventions/internal";
import { f1, load, pct, post, series } from "./lib.ts";

const MCP_HEADERS = { accept: "application/json, text/event-stream" };

export async function benchMcpCost(
  url: string,
  tool: string,
  args: Record<string, unknown>,
  n: number,
  seconds: number,
): Promise<void> {
  const rpc = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: tool, arguments: args } };
  const actions = await series(() => post(`${url}/actions/${tool}`, args), n);
  const mcp = await series(() => post(`${url}/mcp`, rpc, MCP_HEADERS), n);
  const body = (b: unknown) => ({
    url: "",
    method: "POST" as const,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(b),
  });
  const a = await load({ ...body(args), url: `${url}/actions/${tool}` }, seconds);
  const m = await load(
    { ...body(rpc), url: `${url}/mcp`, headers: { "content-type": "application/json", ...MCP_HEADERS } },
    seconds,
  );
  console.log(
    `  ${tool} sequential p50: /mcp ${f1(pct(mcp, 50))} ms vs /actions ${f1(pct(actions, 50))} ms (×${(pct(mcp, 50) / pct(actions, 50)).toFixed(2)})`,
  );
  console.log(
    `  ${tool} 16 connections: /mcp ${Math.round(m.rps)} req/s vs /actions ${Math.round(a.rps)} req/s → /actions is ×${(a.rps / m.rps).toFixed(2)} (non-2xx ${m.non2xx}/${a.non2xx})`,
  );
}

export async function benchToolsList(url: string, tools: readonly AnyTool[]): Promise<void> {
  const res = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", ...MCP_HEADERS },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  const served = (await res.text()).length;
  const full = JSON.stringify({
    tools: tools.map((t) => ({
      name: t.name,
      description: t.summary,
      inputSchema: inputJsonSchema(t.inputSchema),
      outputSchema: outputJsonSchema(t.outputSchema),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    })),
  }).length;
  const per = (bytes: number) => f1(bytes / tools.length / 1024);
  console.log(
    `  tools/list ${served} bytes for ${tools.length} tools = ${per(served)} KB/tool (full schemas: ${per(full)} KB/tool; target ≤ 1.2)`,
  );
}
