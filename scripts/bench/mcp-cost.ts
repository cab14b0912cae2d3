/**
 * MCP against the plain surface, same server, same call: p50 of sequential calls and throughput at 16
 * connections (autocannon), interleaved. And tools/list: bytes per tool as served, against the full
 * schemas (what the list carried before) and the 1.2 KB per tool a small model's context can afford.
 */
import type { AnyTool } from "@roadnerd/conventions";
import { inputJsonSchema, outputJsonSchema } from "@roadnerd/conventions/internal";
import { f1, load, loadavg, pairs, pct } from "./lib.ts";

const MCP_HEADERS = { accept: "application/json, text/event-stream" };

export async function benchMcpCost(
  url: string,
  tool: string,
  args: Record<string, unknown>,
  n: number,
  seconds: number,
): Promise<void> {
  const rpc = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: tool, arguments: args } };
  // Any answer counts (a typed E_UNSUPPORTED where no systemd runs is still a call served through both surfaces).
  const send = async (path: string, b: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(b),
    });
    return (await res.arrayBuffer()).byteLength;
  };
  const { a: actions, b: mcp } = await pairs(
    () => send(`/actions/${tool}`, args),
    () => send("/mcp", rpc, MCP_HEADERS),
    { n, budgetMs: 2_000 },
  );
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
  const seq = pct(actions, 50) / pct(mcp, 50);
  const conc = m.rps / a.rps;
  const mark = (r: number) => `${r.toFixed(2)}×${r >= 0.9 ? "" : "!"}`;
  console.log(
    `  ${tool.padEnd(20)} /mcp ÷ /actions speed: 1 connection p50 ${f1(pct(mcp, 50))} vs ${f1(pct(actions, 50))} ms ${mark(seq)}, 16 connections ${Math.round(m.rps)} vs ${Math.round(a.rps)} req/s ${mark(conc)} (target ≥ 0.9; bytes ${await send("/mcp", rpc, MCP_HEADERS)} vs ${await send(`/actions/${tool}`, args)}; non-2xx ${m.non2xx}/${a.non2xx}; ${loadavg()})`,
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
