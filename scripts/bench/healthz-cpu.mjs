// One path (e.g. /healthz) of several builds, the last one the baseline (e.g. the bare bundle): each server's CPU
// per request (utime + stime of its process over an autocannon run ÷ requests) and req/s, rounds alternating.
// CPU per request moves far less with the machine's load than req/s does. ADR 0037.
//   unshare -n sh -c 'ip link set lo up; node scripts/bench/healthz-cpu.mjs 6 /healthz A/main.js B/main.js BARE/main.mjs'
// Env: METHOD, BODY (JSON), CONNS (default 50), SENV (JSON env for the servers).
import { createRequire } from "node:module";
import { loadavg } from "node:os";
import { startBuilt as start, cpuMicros as ticks } from "./built-server.mjs";

const require = createRequire(new URL("../../package.json", import.meta.url));
const autocannon = require("autocannon");
const [roundsArg, path, ...mains] = process.argv.slice(2);
const method = process.env.METHOD ?? "GET";
const body = process.env.BODY;
const conns = Number(process.env.CONNS ?? 50);
const servers = [];
for (const m of mains) servers.push(await start(m));
const opts = (s) => ({
  url: `${s.url}${path}`,
  connections: conns,
  method,
  ...(body ? { body, headers: { "content-type": "application/json" } } : {}),
});
for (const s of servers) await autocannon({ ...opts(s), duration: 3 });
const res = servers.map(() => ({ us: [], rps: [] }));
const rounds = Number(roundsArg);
for (let i = 0; i < rounds; i++) {
  const order = servers.map((_, k) => k);
  if (i % 2) order.reverse();
  for (const k of order) {
    const s = servers[k];
    const t0 = ticks(s.child.pid);
    const r = await autocannon({ ...opts(s), duration: 3 });
    const used = ticks(s.child.pid) - t0;
    res[k].us.push(used / r.requests.total);
    res[k].rps.push(r.requests.average);
    if (r.non2xx) console.log("non2xx", k, r.non2xx);
  }
}
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const base = res[res.length - 1];
for (const [k, m] of mains.entries()) {
  console.log(
    `${m.split("/").slice(-3).join("/").padEnd(50)} cpu ${med(res[k].us).toFixed(1)} µs/req (${res[k].us.map((x) => x.toFixed(0)).join(" ")}) rps ${Math.round(sum(res[k].rps) / rounds)} ratio-to-last rps ${(sum(res[k].rps) / sum(base.rps)).toFixed(2)} cpu ${(med(base.us) / med(res[k].us)).toFixed(2)}`,
  );
}
console.log("load", loadavg()[0].toFixed(1));
for (const s of servers) s.child.kill("SIGKILL");
