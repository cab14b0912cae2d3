/**
 * Section 7: our tools against systeminformation (what a Node developer would otherwise call), on the same
 * machine state, interleaved pairs, p50/p95 and CPU time (ours ÷ theirs: lower is better; target: ours at most
 * 1/20 of theirs in-process, 1/5 over HTTP):
 *   iface_info ↔ networkInterfaces(), listening_sockets ↔ networkConnections(), process_info {name} (a scan of
 *   every process) ↔ processes(), disk_usage ↔ fsSize().
 * In-process = the tool called through the kernel's testing entry (callTool: strict input, deadline, result
 * schema, summary; one runtime kept, as a server keeps it); HTTP = POST /actions/<tool> to the built server.
 * systeminformation is always called in this process, its children's CPU time counted (it spawns netstat/ss,
 * ps, df, a shell per interface).
 *
 * Runs in a mount namespace of its own with the sysfs of its network namespace (iface_info reads /sys as on a
 * real machine; without it, it would spawn `ip`): `node scripts/sealed.mjs scripts/run-ts.mjs
 * scripts/bench/vs-systeminformation.ts [pairs]` re-executes itself so; `pnpm bench` runs it as section 7.
 */
import { spawnSync } from "node:child_process";
import { createSocket } from "node:dgram";
import { readFileSync } from "node:fs";
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { callTool, testRuntime } from "@roadnerd/conventions/testing";
import { loadServer, REPO_ROOT, selectedServers } from "@roadnerd/registry";
import si from "systeminformation";
import { f1, loadavg, ms, type Proc, pct, post, start, withOwnSysfs } from "./lib.ts";

const OWN_SYSFS = "RN_BENCH_OWN_SYSFS";

/** CPU ms of this process (µs-precise) plus its waited-for children (clock ticks, 10 ms). */
function selfCpu(): number {
  const { user, system } = process.cpuUsage();
  const f = readFileSync("/proc/self/stat", "utf8").slice(readFileSync("/proc/self/stat", "utf8").lastIndexOf(")") + 2);
  const fields = f.split(" ");
  return (user + system) / 1000 + (Number(fields[13]) + Number(fields[14])) * 10;
}

function procCpu(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
}

interface Side {
  wall: number[];
  cpu: number;
}

/** Interleaved pairs (order alternating) after a warm-up; wall per call, CPU summed per side. */
async function cpuPairs(
  ours: () => Promise<unknown>,
  theirs: () => Promise<unknown>,
  oursCpu: () => number,
  gaps: { ours: number; theirs: number },
  n: number,
  budgetMs: number,
): Promise<{ ours: Side; theirs: Side }> {
  for (let i = 0; i < 5; i++) {
    await ours();
    await theirs();
  }
  const out = { ours: { wall: [] as number[], cpu: 0 }, theirs: { wall: [] as number[], cpu: 0 } };
  const t0 = process.hrtime.bigint();
  let gapsTotal = 0;
  for (let i = 0; i < n; i++) {
    gapsTotal = i * (gaps.ours + gaps.theirs);
    if (i >= 10 && ms(t0) - gapsTotal > budgetMs) break;
    for (const side of i % 2 ? (["ours", "theirs"] as const) : (["theirs", "ours"] as const)) {
      const cpu = side === "ours" ? oursCpu : selfCpu;
      // Past the side's own reuse window (untimed), so every timed call reads the system afresh.
      if (gaps[side] > 0) await sleep(gaps[side]);
      const c = cpu();
      const t = process.hrtime.bigint();
      await (side === "ours" ? ours() : theirs());
      out[side].wall.push(ms(t));
      out[side].cpu += cpu() - c;
    }
  }
  return out;
}

function line(label: string, r: { ours: Side; theirs: Side }, target: number): void {
  const speed = (p: number) => pct(r.theirs.wall, p) / pct(r.ours.wall, p);
  const mark = (x: number) => `${x.toFixed(1)}×${x >= target ? "" : "!"}`;
  console.log(
    `  ${label.padEnd(44)} ours p50 ${f1(pct(r.ours.wall, 50)).padStart(6)} p95 ${f1(pct(r.ours.wall, 95)).padStart(6)} ms | si p50 ${f1(pct(r.theirs.wall, 50)).padStart(6)} p95 ${f1(pct(r.theirs.wall, 95)).padStart(6)} ms | faster p50 ${mark(speed(50))} p95 ${mark(speed(95))} CPU ${mark(r.theirs.cpu / r.ours.cpu)} (target ≥ ${target}×; ${r.ours.wall.length} pairs, ${loadavg()})`,
  );
}

/** Something to list: listeners (TCP and UDP) and a few established connections, as on a working laptop. */
async function sockets(): Promise<() => void> {
  const servers: Server[] = [];
  const clients: Socket[] = [];
  for (let i = 0; i < 6; i++) {
    const s = createServer(() => {});
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    servers.push(s);
  }
  for (const s of servers.slice(0, 3)) {
    const c = connect((s.address() as AddressInfo).port, "127.0.0.1");
    await new Promise((r) => c.once("connect", r));
    clients.push(c);
  }
  const udp = createSocket("udp4");
  await new Promise<void>((r) => udp.bind(0, "127.0.0.1", r));
  return () => {
    for (const c of clients) c.destroy();
    for (const s of servers) s.close();
    udp.close();
  };
}

interface Pair {
  server: string;
  tool: string;
  input: Record<string, unknown>;
  si: string;
  call: () => Promise<unknown>;
  /** Untimed waits before a call, past a side's cache: a fresh answer every time on both sides. */
  gaps?: { ours: number; theirs: number };
}

const PAIRS: Pair[] = [
  // networkInterfaces() rescans by default (its cache is only used with rescan false).
  { server: "network", tool: "iface_info", input: {}, si: "networkInterfaces()", call: () => si.networkInterfaces() },
  // Ours reads afresh at every call: the listeners from netlink, the holders by a refresh of its last fd scan
  // (the processes started since, one link per known holder: ADR 0064), a full scan at most every FULL_SCAN_MS.
  {
    server: "ports",
    tool: "listening_sockets",
    input: {},
    si: "networkConnections()",
    call: () => si.networkConnections(),
  },
  // process_info by name reads every process's name (and argv[0]); processes() answers its last listing again
  // for 500 ms: spaced past it.
  {
    server: "ports",
    tool: "process_info",
    input: { name: "node" },
    si: "processes()",
    call: () => si.processes(),
    gaps: { ours: 0, theirs: 510 },
  },
  { server: "storage", tool: "disk_usage", input: {}, si: "fsSize()", call: () => si.fsSize() },
];

const NO_GAPS = { ours: 0, theirs: 0 };
const sleep = (t: number) => new Promise((r) => setTimeout(r, t));

async function main(n: number, budgetMs: number): Promise<void> {
  const close = await sockets();
  const entries = new Map(selectedServers().map((s) => [s.name, join(REPO_ROOT, s.entry)]));
  try {
    console.log("  in-process: the tool through the kernel's runtime vs systeminformation's call (target ≥ 20×)");
    for (const p of PAIRS) {
      const def = await loadServer(p.server);
      const tool = def.tools.find((t) => t.name === p.tool);
      if (!tool) throw new Error(`${p.server} has no ${p.tool}`);
      const runtime = testRuntime(def, { env: {} });
      try {
        const r = await cpuPairs(
          () => callTool(def, tool, p.input, { runtime }),
          p.call,
          selfCpu,
          p.gaps ?? NO_GAPS,
          n,
          budgetMs,
        );
        line(`${p.tool} vs ${p.si}`, r, 20);
      } finally {
        await runtime.close();
      }
    }
    console.log("  over HTTP: POST /actions/<tool> (server CPU + client CPU) vs the call in-process (target ≥ 5×)");
    const started = new Map<string, Proc>();
    try {
      for (const p of PAIRS) {
        let srv = started.get(p.server);
        if (!srv) {
          const entry = entries.get(p.server);
          if (!entry) throw new Error(`no server ${p.server}`);
          srv = await start(process.execPath, [entry]);
          started.set(p.server, srv);
        }
        const url = `${srv.url}/actions/${p.tool}`;
        const pid = srv.pid;
        const r = await cpuPairs(
          () => post(url, p.input),
          p.call,
          () => procCpu(pid) + selfCpu(),
          p.gaps ?? NO_GAPS,
          n,
          budgetMs,
        );
        line(`${p.tool} vs ${p.si}`, r, 5);
      }
    } finally {
      for (const s of started.values()) s.kill();
    }
  } finally {
    close();
  }
}

const n = Number(process.argv[2] ?? 40);
const budgetMs = Number(process.argv[3] ?? 6_000);
if (process.env[OWN_SYSFS] || withOwnSysfs([]).length === 0) {
  await main(n, budgetMs);
} else {
  // Again, in a mount namespace with this network namespace's sysfs (see the header).
  const argv = withOwnSysfs([process.execPath, ...process.argv.slice(1)]);
  const r = spawnSync(argv[0] as string, argv.slice(1), {
    stdio: "inherit",
    env: { ...process.env, [OWN_SYSFS]: "1" },
  });
  process.exitCode = r.status ?? 1;
}
