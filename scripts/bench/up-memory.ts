/**
 * `roadnerd up`'s memory: Σ USS (private pages: what each process alone costs) of the whole process tree, for
 * the default one process and for `--processes` (its baseline: one process per server) in the same run:
 * idle, after `calls` mixed tool calls spread over every server, and after a quiet spell. Run alone:
 * `node scripts/sealed.mjs scripts/run-ts.mjs scripts/bench/up-memory.ts [calls] [quiet seconds]`.
 * For an A/B: UP_MAIN names another build's packages/orchestrator/dist/main.js, UP_NODE_ARGS adds node flags,
 * UP_ENV adds variables to `up`'s environment (`MALLOC_ARENA_MAX=2 …`, space-separated).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { REPO_ROOT, readRegistry } from "@roadnerd/registry";

/** Cheap read-only calls across the servers (a failure, e.g. no systemd here, is still a call served). */
const MIX: Array<[string, string, Record<string, unknown>]> = [
  ["network", "iface_info", {}],
  ["network", "route_info", {}],
  ["ports", "listening_sockets", {}],
  ["dns-config", "dns_config_get", {}],
  ["storage", "disk_usage", {}],
  ["proxy", "proxy_env_status", {}],
  ["service", "service_status", { unit: "ssh.service" }],
];

/** Private_Clean + Private_Dirty of a process, in MiB (0 when it is gone). */
function ussMiB(pid: number): number {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
    let kb = 0;
    for (const m of text.matchAll(/^Private_(?:Clean|Dirty):\s+(\d+) kB/gm)) kb += Number(m[1]);
    return kb / 1024;
  } catch {
    return 0;
  }
}

/** The pid and every descendant, from /proc/<pid>/stat's ppid field. */
function tree(root: number): number[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {}
  }
  const out = [root];
  for (let i = 0; i < out.length && i < 1000; i += 1) for (const [pid, pp] of parent) if (pp === out[i]) out.push(pid);
  return out;
}

const sumUss = (root: number) => tree(root).reduce((s, pid) => s + ussMiB(pid), 0);

async function upAndRows(args: string[]): Promise<{ child: ChildProcess; urls: Map<string, string> }> {
  const extraEnv = () =>
    Object.fromEntries(
      (process.env.UP_ENV ?? "")
        .split(" ")
        .filter(Boolean)
        .map((kv) => [kv.split("=")[0], kv.slice(kv.indexOf("=") + 1)]),
    );
  const nodeArgs = process.env.UP_NODE_ARGS?.split(" ").filter(Boolean) ?? [];
  const main = process.env.UP_MAIN ?? join(REPO_ROOT, "packages/orchestrator/dist/main.js");
  // Every server on a free port (not its default): both modes run at once in the bench (measureBoth).
  const anyPort = Object.fromEntries(
    readRegistry().map((s) => [`ROADNERD_${s.name.toUpperCase().replace(/-/g, "_")}_PORT`, "0"]),
  );
  const child = spawn(process.execPath, [...nodeArgs, main, "up", ...args], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...anyPort, ...extraEnv() },
    stdio: ["ignore", "pipe", "ignore"],
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  for (let i = 0; i < 600 && !out.includes("gateway (MCP)"); i += 1) await new Promise((r) => setTimeout(r, 100));
  const urls = new Map<string, string>();
  for (const line of out.split("\n")) {
    const [name, url] = line.trim().split(/\s{2,}/);
    if (name && url?.startsWith("http://") && name !== "gateway (MCP)") urls.set(name, url);
  }
  return { child, urls };
}

async function mixedCalls(urls: Map<string, string>, calls: number): Promise<number> {
  let ok = 0;
  const one = async (i: number) => {
    const entry = MIX[i % MIX.length];
    if (!entry) return;
    const [server, tool, params] = entry;
    const url = urls.get(server);
    if (!url) return;
    const res = await fetch(`${url}/actions/${tool}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...params, timeout_ms: 5000 }),
    }).catch(() => undefined);
    if (res) {
      await res.arrayBuffer();
      ok += 1;
    }
  };
  // Eight at a time, bounded by `calls`.
  for (let i = 0; i < calls; i += 8)
    await Promise.all(Array.from({ length: Math.min(8, calls - i) }, (_, k) => one(i + k)));
  return ok;
}

export interface UpMemory {
  idle: number;
  /** After one call of each kind and UP_WARM_S of quiet (when set). */
  warm?: number | undefined;
  afterCalls: number;
  afterQuiet: number;
  served: number;
}

/** One `up` started and measured idle, then loaded: what a quiet spell is measured against. */
interface Loaded extends Omit<UpMemory, "afterQuiet"> {
  pid: number;
  /** When its last call was answered (ms, performance.now()). */
  quietFrom: number;
  stop(): Promise<void>;
}

async function startAndLoad(args: string[], calls: number): Promise<Loaded> {
  const { child, urls } = await upAndRows(["--port", "0", ...args]);
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGINT");
    await new Promise((r) => child.once("exit", r));
  };
  try {
    const pid = child.pid ?? 0;
    if (urls.size === 0) throw new Error(`roadnerd up ${args.join(" ")} did not start`);
    await new Promise((r) => setTimeout(r, 3000));
    const idle = sumUss(pid);
    // UP_WARM_S: one call of each kind first, then that many seconds of quiet: what the lazily loaded parts
    // (undici, the MCP SDK, each tool's first run) hold for good, apart from what the calls leave behind.
    const warmS = Number(process.env.UP_WARM_S ?? 0);
    let warm: number | undefined;
    if (warmS > 0) {
      await mixedCalls(urls, MIX.length);
      await new Promise((r) => setTimeout(r, warmS * 1000));
      warm = sumUss(pid);
    }
    const served = await mixedCalls(urls, calls);
    return { pid, idle, warm, afterCalls: sumUss(pid), served, quietFrom: performance.now(), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Its Σ USS once `quietS` seconds have passed since its last call. */
async function afterQuiet(up: Loaded, quietS: number): Promise<number> {
  const left = up.quietFrom + quietS * 1000 - performance.now();
  if (left > 0) await new Promise((r) => setTimeout(r, left));
  return sumUss(up.pid);
}

export async function measureUp(args: string[], calls: number, quietS: number): Promise<UpMemory> {
  const up = await startAndLoad(args, calls);
  try {
    return { ...up, afterQuiet: await afterQuiet(up, quietS) };
  } finally {
    await up.stop();
  }
}

/**
 * Both modes in one spell: `--processes` is loaded while the one process has its quiet spell, and each is
 * measured `quietS` after its own last call (the default run's 5 minutes cannot hold two spells in turn).
 * `inQuiet` starts once both are loaded: other work the spell can hold (their quiet is their own: no calls).
 */
async function measureBoth(calls: number, quietS: number, inQuiet?: () => void): Promise<[UpMemory, UpMemory]> {
  const one = await startAndLoad([], calls);
  try {
    const many = await startAndLoad(["--processes"], calls);
    try {
      inQuiet?.();
      const oneQuiet = await afterQuiet(one, quietS);
      const manyQuiet = await afterQuiet(many, quietS);
      return [
        { ...one, afterQuiet: oneQuiet },
        { ...many, afterQuiet: manyQuiet },
      ];
    } finally {
      await many.stop();
    }
  } finally {
    await one.stop();
  }
}

export async function benchUpMemory(calls: number, quietS: number, inQuiet?: () => void): Promise<void> {
  const f = (x: number) => x.toFixed(1);
  console.log(`\nroadnerd up memory (Σ USS of the process tree, MiB; ${calls} mixed calls, ${quietS} s quiet)`);
  const [one, many] = await measureBoth(calls, quietS, inQuiet);
  // A `!` marks a target missed (issue 17 target 1): idle ≤ 100, after calls ≤ 150, after quiet within 10% of idle.
  for (const [label, a, b, limit] of [
    ["idle", one.idle, many.idle, 100],
    [`after ${calls} calls`, one.afterCalls, many.afterCalls, 150],
    [`after ${quietS} s quiet`, one.afterQuiet, many.afterQuiet, one.idle * 1.1],
  ] as const) {
    const miss = a > limit ? "!" : "";
    console.log(
      `  ${label.padEnd(22)} one process ${f(a).padStart(6)}${miss.padEnd(1)}  --processes ${f(b).padStart(6)}   ratio ${(a / b).toFixed(2)}×`,
    );
  }
  console.log(
    `  calls served: one process ${one.served}, --processes ${many.served}; targets: idle ≤ 100, after calls ≤ 150, after quiet within 10% of idle (load ${loadavg()[0]?.toFixed(1)})`,
  );
}

// Run directly (node scripts/run-ts.mjs scripts/bench/up-memory.ts [calls] [quiet s]), not when bench.ts imports it.
if (process.argv[1]?.endsWith("up-memory.mjs")) {
  await benchUpMemory(Number(process.argv[2] ?? 2000), Number(process.argv[3] ?? 10));
}
