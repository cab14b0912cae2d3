/**
 * Start-up (the orchestrator's attach latency): spawn → `listening` → /healthz answered, interleaved with
 * `node -e 0`. On Node 24: cold (an empty compile cache) and warm (the cache the previous start flushed right
 * after its listening line, even though it was then killed).
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { f1, ms, pct, start } from "./lib.ts";

const run = promisify(execFile);

async function startOnce(node: string, entry: string, env: Record<string, string>): Promise<number> {
  const t0 = process.hrtime.bigint();
  const p = await start(node, [entry], env);
  const res = await fetch(`${p.url}/healthz`);
  await res.arrayBuffer();
  const took = ms(t0);
  p.kill();
  await new Promise((r) => p.child.once("exit", r));
  return took;
}

/** spawn --stdio → an initialize answered on stdout: what an MCP client such as Claude Desktop waits for. */
function stdioOnce(node: string, entry: string): Promise<number> {
  const t0 = process.hrtime.bigint();
  const child = spawn(node, [entry, "--stdio"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LOG_LEVEL: "silent" },
    stdio: ["pipe", "pipe", "ignore"],
  });
  const init = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } },
  };
  child.stdin?.write(`${JSON.stringify(init)}\n`);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no answer over stdio")), 20_000);
    child.stdout?.once("data", () => {
      clearTimeout(timer);
      const took = ms(t0);
      child.kill("SIGKILL");
      child.once("exit", () => resolve(took));
    });
  });
}

export async function benchStartup(node: string, label: string, entry: string, starts: number): Promise<void> {
  const bare: number[] = [];
  const cold: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < starts; i++) {
    // Interleaved so drift on the machine hits every series alike.
    const t0 = process.hrtime.bigint();
    await run(node, ["-e", "0"]);
    bare.push(ms(t0));
    const cache = mkdtempSync(join(tmpdir(), "rn-bench-cache-"));
    try {
      cold.push(await startOnce(node, entry, { NODE_COMPILE_CACHE: cache }));
      warm.push(await startOnce(node, entry, { NODE_COMPILE_CACHE: cache }));
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  }
  const stdio: number[] = [];
  for (let i = 0; i < starts; i++) stdio.push(await stdioOnce(node, entry));
  const b = pct(bare, 50);
  const c = pct(cold, 50);
  const w = pct(warm, 50);
  console.log(
    `  start-up ${label.padEnd(9)} cold p50 ${f1(c)} ms, warm cache ${f1(w)} ms (${((1 - w / c) * 100).toFixed(0)}% less) | node -e 0 ${f1(b)} ms → server adds ${f1(w - b)}–${f1(c - b)} ms | --stdio to initialize ${f1(pct(stdio, 50))} ms`,
  );
}
