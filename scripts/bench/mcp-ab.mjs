// /mcp (tools/call) against /actions for one tool, two builds of a server side by side, rounds alternating (order
// flipped each round): the server's CPU per request (utime+stime from /proc) and req/s, at 1 and 16 connections.
// The A/B of an MCP change (copy a server's dist/ aside before the change). ADR 0052.
//   unshare -n sh -c 'ip link set lo up; node scripts/bench/mcp-ab.mjs <before/main.js> <after/main.js> <tool> [argsJson] [rounds]'
// In argsJson, "$TCP" is replaced by the port of a local listener and "$HTTP" by the URL of a local web page.
// Env: CONNS (default "1,16"), SECONDS (per round, default 2), NODEARGS, SENV (JSON env for the servers).
import { createServer as createHttpServer } from "node:http";
import { createRequire } from "node:module";
import { createServer as createTcpServer } from "node:net";
import { loadavg } from "node:os";
import { startBuilt, cpuMicros as ticks, toolCallRequests } from "./built-server.mjs";

const require = createRequire(new URL("../../package.json", import.meta.url));
const autocannon = require("autocannon");
const [before, after, tool, argsRaw = "{}", roundsArg = "4"] = process.argv.slice(2);
if (!before || !after || !tool) {
  console.error("usage: mcp-ab.mjs <before/main.js> <after/main.js> <tool> [argsJson] [rounds]");
  process.exit(2);
}
const tcp = createTcpServer((s) => s.destroy());
const web = createHttpServer((_req, res) => res.end("ok"));
await new Promise((r) => tcp.listen(0, "127.0.0.1", r));
await new Promise((r) => web.listen(0, "127.0.0.1", r));
const argsJson = argsRaw
  .replaceAll('"$TCP"', String(tcp.address().port))
  .replaceAll("$HTTP", `http://127.0.0.1:${web.address().port}/`);
const conns = (process.env.CONNS ?? "1,16").split(",").map(Number);
const seconds = Number(process.env.SECONDS ?? 2);

const spec = (url, surface) => toolCallRequests(url, tool, JSON.parse(argsJson))[surface];
const start = (main) => startBuilt(main, { OUTBOUND_ALLOW: "127.0.0.0/8" });
const servers = { before: await start(before), after: await start(after) };
const keys = [];
for (const b of ["before", "after"]) for (const s of ["actions", "mcp"]) keys.push(`${b} ${s}`);
try {
  for (const c of conns) {
    const res = Object.fromEntries(keys.map((k) => [k, { us: [], rps: [], bytes: 0, non2xx: 0 }]));
    for (const k of keys) {
      const [b, s] = k.split(" ");
      await autocannon({ ...spec(servers[b].url, s), connections: c, duration: 1 });
    }
    const rounds = Number(roundsArg);
    for (let i = 0; i < rounds; i++) {
      for (const k of i % 2 ? [...keys].reverse() : keys) {
        const [b, s] = k.split(" ");
        const pid = servers[b].child.pid;
        const t0 = ticks(pid);
        const r = await autocannon({ ...spec(servers[b].url, s), connections: c, duration: seconds });
        res[k].us.push((ticks(pid) - t0) / r.requests.total);
        res[k].rps.push(r.requests.average);
        res[k].bytes = Math.round(r.throughput.total / Math.max(1, r.requests.total));
        res[k].non2xx += r.non2xx;
      }
    }
    const med = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
    const mean = (xs) => xs.reduce((x, y) => x + y, 0) / xs.length;
    console.log(`${tool} at ${c} connection(s), ${rounds} rounds × ${seconds} s, load ${loadavg()[0].toFixed(1)}`);
    for (const k of keys)
      console.log(
        `  ${k.padEnd(15)} cpu ${med(res[k].us).toFixed(1).padStart(6)} µs/req  ${String(Math.round(mean(res[k].rps))).padStart(6)} req/s  ~${res[k].bytes} B/answer  non-2xx ${res[k].non2xx}`,
      );
    for (const b of ["before", "after"])
      console.log(
        `  ${b}: /mcp ÷ /actions  req/s ${(mean(res[`${b} mcp`].rps) / mean(res[`${b} actions`].rps)).toFixed(2)}×  cpu ${(med(res[`${b} actions`].us) / med(res[`${b} mcp`].us)).toFixed(2)}×`,
      );
  }
} finally {
  for (const s of Object.values(servers)) s.child.kill("SIGKILL");
  tcp.close();
  web.close();
}
