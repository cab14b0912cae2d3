/**
 * The start `pnpm build` makes of each server it built (ADR 0062): listening on 127.0.0.1, one /healthz, one
 * MCP initialize and tools/list, then SIGTERM; with ROADNERD_CODE_CACHE=write its launcher writes the V8 code
 * cache at exit, holding every function that start compiled. Nothing leaves loopback and no tool runs.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { codeCachePath } from "../../packages/conventions/src/process/launch-bundle.ts";
import { superviseListening } from "../../packages/conventions/src/process/supervise.ts";

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

async function post(url: string, body: unknown, headers: Record<string, string>): Promise<Response> {
  const res = await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  await res.arrayBuffer();
  return res;
}

/**
 * Starts `main` once with `node` (this one by default) to write `bundle`'s code cache for that Node; says why
 * when it could not (the build goes on).
 */
export async function trainCodeCache(
  main: string,
  bundle: string,
  node: string = process.execPath,
): Promise<string | undefined> {
  const started = await superviseListening([node, main], {
    env: { HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "warn", ROADNERD_CODE_CACHE: "write" },
  }).catch((err: unknown) => err as Error);
  if (started instanceof Error) return `did not start: ${started.message}`;
  try {
    await (await fetch(`${started.url}/healthz`, { signal: AbortSignal.timeout(10_000) })).arrayBuffer();
    const init = await post(
      `${started.url}/mcp`,
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "pnpm-build", version: "1" } },
      },
      MCP_HEADERS,
    );
    const session = init.headers.get("mcp-session-id");
    const headers = {
      ...MCP_HEADERS,
      "mcp-protocol-version": "2025-06-18",
      ...(session ? { "mcp-session-id": session } : {}),
    };
    await post(`${started.url}/mcp`, { jsonrpc: "2.0", method: "notifications/initialized" }, headers);
    await post(`${started.url}/mcp`, { jsonrpc: "2.0", id: 2, method: "tools/list" }, headers);
  } catch (err) {
    return `did not answer: ${(err as Error).message}`;
  } finally {
    await started.stop();
  }
  const version = spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim();
  return existsSync(codeCachePath(bundle, version))
    ? undefined
    : `wrote no cache (${started.stderrTail().trim() || "no output"})`;
}
