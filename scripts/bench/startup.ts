/**
 * Attach (what the orchestrator waits for): spawn → `listening` → /healthz answered, for a server's bundle and for
 * the bare Fastify + zod bundle (scripts/bench/bare-bundle.ts: esbuild ESM with Node's compile cache, the
 * standard way), interleaved, each cold (an empty compile cache; a server's code cache not read) and warm (the
 * bare bundle: the compile cache its previous start flushed; a server: the code cache `pnpm build` wrote, ADR
 * 0062). Target: server ≤ 0.85× bare.
 * `--stdio` to an answered initialize (what an MCP client such as Claude Desktop waits for) in --full.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { f1, loadavg, ms, pct, start } from "./lib.ts";

async function attachOnce(node: string, main: string, env: Record<string, string>): Promise<number> {
  const t0 = process.hrtime.bigint();
  const p = await start(node, [main], env);
  const res = await fetch(`${p.url}/healthz`);
  await res.arrayBuffer();
  const took = ms(t0);
  p.kill();
  await new Promise((r) => p.child.once("exit", r));
  return took;
}

/** Cold then warm start of one bundle with a fresh compile cache. */
async function coldWarm(node: string, main: string): Promise<[number, number]> {
  const cache = mkdtempSync(join(tmpdir(), "rn-bench-cache-"));
  try {
    // Cold: a server's code cache (ADR 0062) not read either.
    const cold = await attachOnce(node, main, { NODE_COMPILE_CACHE: cache, ROADNERD_CODE_CACHE: "off" });
    const warm = await attachOnce(node, main, { NODE_COMPILE_CACHE: cache });
    return [cold, warm];
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

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

export interface AttachSide {
  /** The line's name (a server's, or "bare" for the bare app built as a server). */
  name: string;
  label: string;
  entry: string;
  /** Whether the line is judged against ≤ 0.85× (the informational lines are not). */
  target: boolean;
}

/**
 * Every side and the bare bundle started in rounds, the order rotating each round (drift on the machine hits
 * them all alike), each cold then warm; one line per side against the bare bundle's starts of the same rounds.
 * One baseline for all (`starts` of it, not `starts` per side): section 1 in half the time.
 */
export async function benchAttach(
  node: string,
  sides: readonly AttachSide[],
  bareMain: string,
  starts: number,
  withStdio = false,
): Promise<void> {
  const mains = [bareMain, ...sides.map((x) => x.entry)];
  const runs = mains.map(() => ({ cold: [] as number[], warm: [] as number[] }));
  for (let i = 0; i < starts; i++) {
    for (let k = 0; k < mains.length; k++) {
      const j = (i + k) % mains.length;
      const [cold, warm] = await coldWarm(node, mains[j] as string);
      runs[j]?.cold.push(cold);
      runs[j]?.warm.push(warm);
    }
  }
  const b = runs[0] ?? { cold: [], warm: [] };
  for (const [k, side] of sides.entries()) {
    const s = runs[k + 1] ?? { cold: [], warm: [] };
    const r = (key: "cold" | "warm") => {
      const x = pct(s[key], 50) / pct(b[key], 50);
      return `${f1(pct(s[key], 50))} vs ${f1(pct(b[key], 50))} ms ${x.toFixed(2)}×${!side.target || x <= 0.85 ? "" : "!"}`;
    };
    let stdio = "";
    if (withStdio && side.target) {
      const xs: number[] = [];
      for (let i = 0; i < starts; i++) xs.push(await stdioOnce(node, side.entry));
      stdio = ` | --stdio to initialize ${f1(pct(xs, 50))} ms`;
    }
    console.log(
      `  ${side.name.padEnd(10)} ${side.label.padEnd(9)} attach p50 warm ${r("warm")}, cold ${r("cold")} (bare fastify+zod; ${starts} each, ${loadavg()})${stdio}`,
    );
  }
}
