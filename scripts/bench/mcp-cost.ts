/**
 * MCP against the plain surface, same server, same call, same answer: p50 of sequential calls, throughput at 16
 * connections (autocannon, order alternated) and the server's CPU per request. And tools/list: bytes per tool as served, against the full
 * schemas (what the list carried before) and the 1.2 KB per tool a small model's context can afford.
 */
import type { AnyTool } from "@roadnerd/conventions";
import { inputJsonSchema, outputJsonSchema } from "@roadnerd/conventions/internal";
import { cpuMicros, f1, load, loadavg, pairs, pct, postText } from "./lib.ts";

const MCP_HEADERS = { accept: "application/json, text/event-stream" };

/** What an answer was: "ok", or the error code it carried (a non-2xx on /actions, an isError result on /mcp). */
function outcome(status: number, text: string, mcp: boolean): string {
  const failed = mcp ? /"isError":true/.test(text) || status >= 300 : status >= 300;
  return failed ? (/\\?"code\\?":\\?"(E_[A-Z_]+)/.exec(text)?.[1] ?? `HTTP ${status}`) : "ok";
}

export async function benchMcpCost(
  url: string,
  pid: number,
  tool: string,
  args: Record<string, unknown>,
  n: number,
  seconds: number,
): Promise<void> {
  const rpc = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: tool, arguments: args } };
  // The client RoadNerd's own callers use (undici's request, as the floor lines): Node's fetch costs the client
  // ~0.3 ms a call on both sides, which hid a third of the difference this line looks for.
  const send = async (path: string, b: unknown, headers: Record<string, string> = {}) => {
    const { status, text } = await postText(`${url}${path}`, b, headers);
    return { bytes: Buffer.byteLength(text), answer: outcome(status, text, path === "/mcp") };
  };
  // Like with like: both surfaces must give the same answer (both a result, or both the same typed error: where
  // no systemd runs, /actions answers 501 E_UNSUPPORTED and /mcp an isError result with that code).
  const first = { actions: await send(`/actions/${tool}`, args), mcp: await send("/mcp", rpc, MCP_HEADERS) };
  const same = first.actions.answer === first.mcp.answer;
  // The steady per-call cost, as the floor lines measure it (server-bench.ts): both sides warmed past the JIT's
  // tiers, then at least 100 pairs; a new process's first calls are attach's (section 1).
  const { a: actions, b: mcp } = await pairs(
    () => send(`/actions/${tool}`, args),
    () => send("/mcp", rpc, MCP_HEADERS),
    { n: Math.max(n, 100), budgetMs: 2_000, warmup: 300 },
  );
  const body = (b: unknown) => ({
    url: "",
    method: "POST" as const,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(b),
  });
  const specs = {
    actions: { ...body(args), url: `${url}/actions/${tool}` },
    mcp: { ...body(rpc), url: `${url}/mcp`, headers: { "content-type": "application/json", ...MCP_HEADERS } },
  };
  // Two half runs per surface, order flipped (a m m a): neither side always runs on a warmer or quieter machine.
  const sum = { actions: { rps: 0, requests: 0, us: 0 }, mcp: { rps: 0, requests: 0, us: 0 } };
  for (const k of ["actions", "mcp", "mcp", "actions"] as const) {
    const before = cpuMicros(pid);
    const r = await load(specs[k], seconds / 2);
    sum[k].us += cpuMicros(pid) - before;
    sum[k].rps += r.rps / 2;
    sum[k].requests += r.requests;
  }
  const usA = sum.actions.us / Math.max(1, sum.actions.requests);
  const usM = sum.mcp.us / Math.max(1, sum.mcp.requests);
  const seq = pct(actions, 50) / pct(mcp, 50);
  const conc = sum.mcp.rps / sum.actions.rps;
  const mark = (r: number) => `${r.toFixed(2)}×${r >= 0.9 ? "" : "!"}`;
  const answers = same
    ? `answers ${first.actions.answer} on both`
    : `answers differ! /mcp ${first.mcp.answer}, /actions ${first.actions.answer}`;
  console.log(
    `  ${tool.padEnd(20)} /mcp ÷ /actions speed: 1 connection p50 ${f1(pct(mcp, 50))} vs ${f1(pct(actions, 50))} ms ${mark(seq)}, 16 connections ${Math.round(sum.mcp.rps)} vs ${Math.round(sum.actions.rps)} req/s ${mark(conc)}, server CPU ${f1(usM)} vs ${f1(usA)} µs/req ${mark(usA / usM)} (target ≥ 0.9; bytes ${first.mcp.bytes} vs ${first.actions.bytes}; ${answers}; ${loadavg()})`,
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
