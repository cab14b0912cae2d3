// pnpm bench: prints figures and ratios, asserts nothing. It runs sealed (scripts/sealed.mjs: only loopback),
// every loop is bounded, and each figure is printed beside its baseline measured in the same run. For every
// registered server:
//   1. start-up: cold and with a warm compile cache, against `node -e 0` (Node 20, and Node 24 if fetched)
//   2. tools/list bytes per tool, against the full schemas and the 1.2 KB target
//   3. /mcp against /actions for the same cheap call: sequential p50 and throughput at 16 connections
//   4. /healthz throughput against a bare Fastify app
//   5. per-tool latency against the data source underneath (servers/<name>/bench/latency.ts, when it has one)
//   6. RSS: idle, against a bare Fastify app and an idle node; the curve over 10,000 mixed calls and an idle minute
//   7. `roadnerd up`: Σ USS of every server + the gateway in one process, against --processes (one each)
// `--quick` does fewer rounds; `--long` then runs the fuzz and load suites in their long mode (FUZZ_RUNS=500,
// LOAD_SECONDS=60).
import { spawn, spawnSync } from "node:child_process";
import { cpus } from "node:os";
import { join } from "node:path";
import { loadServer, REPO_ROOT, selectedServers } from "@roadnerd/registry";
import type { ServerBench } from "@roadnerd/testkit";
import { f1, load, quick, rssMb, start } from "./bench/lib.ts";
import { benchMcpCost, benchToolsList } from "./bench/mcp-cost.ts";
import { benchRssCurve } from "./bench/rss-curve.ts";
import { benchContext } from "./bench/server-bench.ts";
import { benchStartup } from "./bench/startup.ts";
import { benchUpMemory } from "./bench/up-memory.ts";
// @ts-expect-error plain .mjs helper
import { nodeBinary } from "./lib/tools.mjs";

const N = quick ? 40 : 200;
const STARTS = quick ? 4 : 12;
const SECONDS = quick ? 2 : 5;
const CALLS = quick ? 2000 : 10_000;
const IDLE_S = quick ? 10 : 60;
const node20 = process.execPath;
let node24: string | undefined;
try {
  node24 = nodeBinary(24) as string;
} catch {
  node24 = undefined;
}
const version = (node: string) => spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim();

console.log(
  `RoadNerd bench — ${new Date().toISOString()} — ${process.version}${node24 ? ` and ${version(node24)}` : ""}, ${cpus().length} cores${quick ? " (quick)" : ""}`,
);

async function serverModule(name: string): Promise<ServerBench> {
  try {
    return (await import(`../servers/${name}/bench/latency.ts`)) as ServerBench;
  } catch {
    return {};
  }
}

const bare = await start(node20, [join(REPO_ROOT, "scripts/bench/bare-fastify.mjs")]);

for (const registered of selectedServers()) {
  const entry = join(REPO_ROOT, registered.entry);
  const def = await loadServer(registered.name);
  const mod = await serverModule(registered.name);
  console.log(`\n${registered.name} (${def.tools.length} tools)`);

  await benchStartup(node20, version(node20), entry, STARTS);
  if (node24) await benchStartup(node24, version(node24), entry, STARTS);

  // The server's own bench world (a booted systemd…), so its example calls are real answers.
  const world = await mod.world?.();
  const env = { OUTBOUND_ALLOW: "127.0.0.0/8", ...world?.env };
  const srv = await start(node20, [entry], env);
  const idleRss = rssMb(srv.pid);
  await benchToolsList(srv.url, def.tools);

  const cheap = mod.cheapCall
    ? await mod.cheapCall()
    : { tool: def.tools[0]?.name ?? "", args: (def.tools[0]?.example ?? {}) as Record<string, unknown>, close() {} };
  await benchMcpCost(srv.url, cheap.tool, cheap.args, N, SECONDS);
  cheap.close();

  await load({ url: `${srv.url}/healthz` }, 1);
  await load({ url: `${bare.url}/healthz` }, 1);
  const ours = await load({ url: `${srv.url}/healthz` }, SECONDS);
  const theirs = await load({ url: `${bare.url}/healthz` }, SECONDS);
  console.log(
    `  /healthz 16 connections: ${Math.round(ours.rps)} req/s vs bare Fastify ${Math.round(theirs.rps)} req/s → ×${(ours.rps / theirs.rps).toFixed(2)}`,
  );

  if (mod.benchLatency) {
    console.log(`  per-tool latency over HTTP (${N} calls each, sequential) against the data source underneath:`);
    await mod.benchLatency(benchContext(node20, entry, N));
  }

  const idle = spawn(node20, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  await new Promise((r) => setTimeout(r, 1000));
  console.log(
    `  idle RSS: ${f1(idleRss)} MB (after the figures above: ${f1(rssMb(srv.pid))} MB), bare Fastify ${f1(rssMb(bare.pid))} MB, idle node ${f1(rssMb(idle.pid as number))} MB`,
  );
  idle.kill("SIGKILL");
  srv.kill();

  const fresh = await start(node20, [entry], env);
  await benchRssCurve(fresh.url, fresh.pid, def.tools, CALLS, IDLE_S);
  fresh.kill();
  await world?.close();
}
bare.kill();

// 7. `roadnerd up`: every server in one process against one process each (--processes), Σ USS of the tree.
await benchUpMemory(quick ? 2000 : CALLS, quick ? 10 : IDLE_S);

if (process.argv.includes("--long")) {
  console.log("\nlong suites: fuzz (FUZZ_RUNS=500) and load (LOAD_SECONDS=60, 50 connections)");
  const run = spawnSync(
    process.execPath,
    [join(REPO_ROOT, "node_modules/vitest/vitest.mjs"), "run", "test/suites/fuzz.test.ts", "test/suites/load.test.ts"],
    { cwd: REPO_ROOT, stdio: "inherit", env: { ...process.env, FUZZ_RUNS: "500", LOAD_SECONDS: "60" } },
  );
  if (run.status !== 0) process.exitCode = 1;
}
