// pnpm bench: prints figures and ratios, asserts nothing. Every target is on loopback and every loop bounded.
//  1. cold start: spawn → /healthz answers, against `node -e 0` (Node 20, and Node 24 if fetched)
//  2. per-tool latency p50/p99 through HTTP, against the data source underneath measured the same way
//  3. /healthz throughput against a bare Fastify app
//  4. idle RSS against a bare Fastify app and an idle node
import { execFile, spawn } from "node:child_process";
import { createSocket } from "node:dgram";
import { readFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, connect, createServer as createTcpServer } from "node:net";
import { promisify } from "node:util";
import { startDnsServer } from "@roadnerd/testkit";
import dnsPacket from "dns-packet";
import { Pool, request } from "undici";
// @ts-expect-error plain .mjs helper
import { nodeBinary } from "./lib/tools.mjs";

const run = promisify(execFile);
const ROOT = process.cwd();
const ENTRY = `${ROOT}/servers/network/dist/main.js`;
const quick = process.argv.includes("--quick");
const N = quick ? 40 : 200;
const STARTS = quick ? 5 : 15;

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
}
const f1 = (x: number) => x.toFixed(1);

interface Proc {
  url: string;
  pid: number;
  stop(): void;
}

/** Every process this bench starts, killed on exit even if the bench fails half-way. */
const children = new Set<ReturnType<typeof spawn>>();
process.once("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(130));

function start(node: string, args: string[], env: Record<string, string> = {}): Promise<Proc> {
  return new Promise((resolve, reject) => {
    // An explicit environment: nothing from the developer's shell (CAPPORT_URL, RESOLV_CONF…) leaks in.
    const child = spawn(node, args, {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info", ...env },
      stdio: ["ignore", "pipe", "ignore"],
    });
    children.add(child);
    child.once("exit", () => children.delete(child));
    let buf = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error("no listening line"));
    }, 20_000);
    child.stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      for (const line of buf.split("\n")) {
        if (!line.includes('"listening"')) continue;
        clearTimeout(timer);
        const url = (JSON.parse(line) as { url: string }).url;
        child.stdout.removeAllListeners("data");
        child.stdout.resume();
        resolve({ url, pid: child.pid as number, stop: () => child.kill("SIGKILL") });
        return;
      }
    });
  });
}

async function coldStart(node: string, label: string): Promise<void> {
  const server: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    // Interleaved so drift on the machine hits both series alike.
    let t0 = process.hrtime.bigint();
    await run(node, ["-e", "0"]);
    bare.push(ms(t0));
    t0 = process.hrtime.bigint();
    const p = await start(node, [ENTRY], { OUTBOUND_ALLOW: "127.0.0.0/8" });
    const res = await request(`${p.url}/healthz`);
    await res.body.dump();
    server.push(ms(t0));
    p.stop();
  }
  const a = pct(server, 50);
  const b = pct(bare, 50);
  console.log(
    `cold start ${label.padEnd(22)} p50 ${f1(a)} ms (node -e 0: ${f1(b)} ms) → server adds ${f1(a - b)} ms, ratio ${(a / b).toFixed(2)}×`,
  );
}

async function series(fn: () => Promise<unknown>, n = N): Promise<number[]> {
  for (let i = 0; i < Math.min(20, n); i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    out.push(ms(t0));
  }
  return out;
}

async function callTool(url: string, tool: string, body: unknown): Promise<void> {
  const res = await request(`${url}/actions/${tool}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${tool}: ${res.statusCode} ${text}`);
}

function row(name: string, tool: number[], source: number[], sourceLabel: string): void {
  const t50 = pct(tool, 50);
  const s50 = pct(source, 50);
  console.log(
    `${name.padEnd(21)} p50 ${f1(t50).padStart(6)} p99 ${f1(pct(tool, 99)).padStart(6)} ms | ${sourceLabel.padEnd(30)} p50 ${f1(s50).padStart(6)} p99 ${f1(pct(source, 99)).padStart(6)} ms | ×${(t50 / s50).toFixed(2)}`,
  );
}

function udpQuery(host: string, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const sock = createSocket("udp4");
    sock.once("message", () => {
      sock.close();
      resolve();
    });
    sock.once("error", reject);
    sock.send(
      dnsPacket.encode({ type: "query", id: 1, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: "A", name }] }),
      53,
      host,
    );
  });
}

async function throughput(url: string, total: number): Promise<number> {
  const pool = new Pool(url, { connections: 16, pipelining: 1 });
  const t0 = process.hrtime.bigint();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < total) {
        next += 1;
        const res = await pool.request({ path: "/healthz", method: "GET" });
        await res.body.dump();
      }
    }),
  );
  const seconds = ms(t0) / 1000;
  await pool.close();
  return total / seconds;
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1] ?? 0) / 1024;
}

const node20 = process.execPath;
console.log(
  `RoadNerd bench — ${new Date().toISOString()} — ${process.version}, ${(await import("node:os")).cpus().length} cores${quick ? " (quick)" : ""}\n`,
);

// 1. cold start
await coldStart(node20, `(${process.version})`);
let node24: string | undefined;
try {
  node24 = nodeBinary(24) as string;
  const v = (await run(node24, ["--version"])).stdout.trim();
  await coldStart(node24, `(${v}, compile cache)`);
} catch (err) {
  console.log(`cold start on Node 24 skipped: ${(err as Error).message}`);
}

// 2. per-tool latency
console.log(`\nper-tool latency over HTTP (${N} calls each, sequential) against the data source underneath:`);
const web = createHttpServer((req, res) => {
  if (req.url === "/generate_204") {
    res.writeHead(204).end();
    return;
  }
  res.writeHead(200, { "content-type": "text/plain" }).end("ok");
});
await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
const webUrl = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
const tcp = createTcpServer((s) => s.destroy());
await new Promise<void>((r) => tcp.listen(0, "127.0.0.1", r));
const tcpPort = (tcp.address() as AddressInfo).port;
let dns: Awaited<ReturnType<typeof startDnsServer>> | undefined;
try {
  dns = await startDnsServer({
    host: "127.53.99.1",
    port: 53,
    records: [{ name: "bench.test", type: "A", ttl: 60, data: "192.0.2.7" }],
  });
} catch (err) {
  console.log(`(dns_resolve row skipped: cannot bind 127.53.99.1:53: ${(err as Error).message})`);
}
// Every default that would reach out points at loopback: the captive probes and the test URL.
const loopbackEnv = {
  CAPTIVE_TEST_URL: `${webUrl}/`,
  CAPTIVE_PROBES: JSON.stringify([{ url: `${webUrl}/generate_204`, expect: 204 }]),
  OUTBOUND_ALLOW: "127.0.0.0/8",
};
const srv = await start(node20, [ENTRY], loopbackEnv);
row(
  "iface_info",
  await series(() => callTool(srv.url, "iface_info", {})),
  await series(() => run("ip", ["-j", "addr", "show"])),
  "ip -j addr show",
);
row(
  "route_info",
  await series(() => callTool(srv.url, "route_info", {})),
  await series(() =>
    Promise.all([
      run("ip", ["-j", "-4", "route", "show", "table", "main"]),
      run("ip", ["-j", "-6", "route", "show", "table", "main"]),
    ]),
  ),
  "ip -j -4/-6 route (parallel)",
);
if (dns) {
  const host = dns.host;
  row(
    "dns_resolve",
    await series(() => callTool(srv.url, "dns_resolve", { qname: "bench.test", server: host })),
    await series(() => udpQuery(host, "bench.test")),
    "one UDP query (dns-packet)",
  );
}
row(
  "tcp_port_check",
  await series(() => callTool(srv.url, "tcp_port_check", { host: "127.0.0.1", port: tcpPort })),
  await series(
    () =>
      new Promise<void>((resolve, reject) => {
        const s = connect(tcpPort, "127.0.0.1", () => {
          s.destroy();
          resolve();
        });
        s.once("error", reject);
      }),
  ),
  "net.connect",
);
row(
  "http_check",
  await series(() => callTool(srv.url, "http_check", { url: `${webUrl}/` })),
  await series(async () => (await request(`${webUrl}/`)).body.dump()),
  "undici GET",
);
row(
  "captive_portal_check",
  await series(() => callTool(srv.url, "captive_portal_check", { test_url: `${webUrl}/generate_204` })),
  await series(async () => (await request(`${webUrl}/generate_204`)).body.dump()),
  "undici GET of the probe",
);
row(
  "healthz (no tool)",
  await series(async () => (await request(`${srv.url}/healthz`)).body.dump()),
  await series(async () => (await request(`${webUrl}/`)).body.dump()),
  "node:http hello",
);

// 3. /healthz throughput
const bare = await start(node20, [`${ROOT}/scripts/bench/bare-fastify.mjs`]);
const total = quick ? 2000 : 10_000;
await throughput(srv.url, 500);
await throughput(bare.url, 500);
const ours = await throughput(srv.url, total);
const theirs = await throughput(bare.url, total);
console.log(
  `\n/healthz throughput (${total} requests, 16 connections): ${Math.round(ours)} req/s vs bare Fastify ${Math.round(theirs)} req/s → ${(ours / theirs).toFixed(2)}×`,
);

// 4. idle RSS: fresh processes, after a second of idle
const fresh = await start(node20, [ENTRY], loopbackEnv);
const freshBare = await start(node20, [`${ROOT}/scripts/bench/bare-fastify.mjs`]);
const idle = spawn(node20, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
children.add(idle);
await new Promise((r) => setTimeout(r, 1000));
console.log(
  `idle RSS: network ${f1(rssMb(fresh.pid))} MB (after the load above: ${f1(rssMb(srv.pid))} MB), bare Fastify ${f1(rssMb(freshBare.pid))} MB, idle node ${f1(rssMb(idle.pid as number))} MB`,
);

for (const p of [srv, bare, fresh, freshBare]) p.stop();
idle.kill("SIGKILL");
web.close();
tcp.close();
await dns?.close();
