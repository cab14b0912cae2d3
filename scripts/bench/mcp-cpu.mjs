// One tool of one server over /actions and over /mcp (tools/call), rounds alternating: the server's CPU per
// request and req/s at 16 connections (section 4 of pnpm bench runs each side once, in order). ADR 0037.
//   unshare -n sh -c 'ip link set lo up; node scripts/bench/mcp-cpu.mjs 6 servers/proxy/dist/main.js proxy_env_status'
// Env: CONNS, NODEARGS, SENV (JSON env for the server).
import { createRequire } from "node:module";
import { loadavg } from "node:os";
import { cpuMicros, startBuilt, toolCallRequests } from "./built-server.mjs";

const require = createRequire(new URL("../../package.json", import.meta.url));
const autocannon = require("autocannon");
const [roundsArg, main, tool, argsJson = "{}"] = process.argv.slice(2);
const args = JSON.parse(argsJson);
const conns = Number(process.env.CONNS ?? 16);
const { child, url } = await startBuilt(main);
const specs = toolCallRequests(url, tool, args);
const ticks = () => cpuMicros(child.pid);
for (const k of Object.keys(specs)) await autocannon({ ...specs[k], connections: conns, duration: 3 });
const res = { actions: { us: [], rps: [] }, mcp: { us: [], rps: [] } };
for (let i = 0; i < Number(roundsArg); i++)
  for (const k of i % 2 ? ["mcp", "actions"] : ["actions", "mcp"]) {
    const t0 = ticks();
    const r = await autocannon({ ...specs[k], connections: conns, duration: 3 });
    res[k].us.push((ticks() - t0) / r.requests.total);
    res[k].rps.push(r.requests.average);
    if (r.non2xx) console.log("non2xx", k, r.non2xx);
  }
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sum = (xs) => xs.reduce((a, b) => a + b, 0);
for (const k of ["actions", "mcp"])
  console.log(
    k.padEnd(8),
    `cpu ${med(res[k].us).toFixed(1)} µs/req (${res[k].us.map((x) => x.toFixed(0)).join(" ")}) rps ${Math.round(sum(res[k].rps) / res[k].rps.length)}`,
  );
console.log(
  `mcp/actions rps ${(sum(res.mcp.rps) / sum(res.actions.rps)).toFixed(2)} cpu ${(med(res.actions.us) / med(res.mcp.us)).toFixed(2)} load ${loadavg()[0].toFixed(1)}`,
);
child.kill("SIGKILL");
