/**
 * Gateway clients for the fair-share tests: the MCP headers, one `network__http_check` tools/call, and the
 * same call made as another local user (uid 65534) from a child process, since a uid is what the share counts.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { scaledMs } from "@roadnerd/testkit";

export const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-06-18",
};

/** A tools/call of network's http_check on `url`, with room to be held by the target. */
export const rpc = (id: number, url: string) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "network__http_check", arguments: { url, timeout_ms: 15_000 } },
  });

/** One tools/call from uid 65534, in a child process: the HTTP status and the JSON-RPC body. */
export async function callAsNobody(
  gatewayUrl: string,
  url: string,
  timeoutMs: number,
): Promise<{ status: number; body: string }> {
  const { port } = new URL(gatewayUrl);
  const script = `const h=require("node:http");const q=h.request({host:"127.0.0.1",port:${port},path:"/mcp",method:"POST",headers:${JSON.stringify(MCP_HEADERS)}},r=>{let b="";r.on("data",d=>b+=d);r.on("end",()=>process.stdout.write(JSON.stringify({status:r.statusCode,body:b})))});q.on("error",e=>process.stdout.write(JSON.stringify({status:0,body:String(e)})));q.end(${JSON.stringify(rpc(1, url))})`;
  const { stdout } = await promisify(execFile)(
    "setpriv",
    ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "-e", script],
    { timeout: scaledMs(timeoutMs) },
  );
  return JSON.parse(stdout) as { status: number; body: string };
}
