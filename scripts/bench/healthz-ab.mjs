// /healthz throughput of two builds of a server beside the bare Fastify + zod bundle, rounds alternating,
// autocannon at 50 connections: the A/B of a kernel change (copy a server's dist/ aside before the change).
//   unshare -n sh -c 'ip link set lo up; node scripts/bench/healthz-ab.mjs <before/main.js> <after/main.js> <bare/main.mjs> [rounds]'
// (the bare bundle: scripts/bench/bare-bundle.ts builds it into a temp dir).
import { createRequire } from "node:module";
import { loadavg } from "node:os";
import { startBuilt as start } from "./built-server.mjs";

const require = createRequire(new URL("../../package.json", import.meta.url));
const autocannon = require("autocannon");
const [before, after, bare, roundsArg] = process.argv.slice(2);
if (!before || !after || !bare) {
  console.error("usage: healthz-ab.mjs <before/main.js> <after/main.js> <bare/main.mjs> [rounds]");
  process.exit(2);
}
const servers = { before: await start(before), after: await start(after), bare: await start(bare) };
const rps = { before: [], after: [], bare: [] };
try {
  for (const k of Object.keys(servers))
    await autocannon({ url: `${servers[k].url}/healthz`, connections: 50, duration: 1 });
  const rounds = Number(roundsArg ?? 4);
  for (let i = 0; i < rounds; i++) {
    for (const k of i % 2 ? ["bare", "after", "before"] : ["before", "after", "bare"]) {
      const r = await autocannon({ url: `${servers[k].url}/healthz`, connections: 50, duration: 3 });
      rps[k].push(r.requests.average);
    }
  }
  const sum = (xs) => xs.reduce((a, b) => a + b, 0);
  const [b, a, z] = [sum(rps.before), sum(rps.after), sum(rps.bare)];
  console.log(
    `before ${Math.round(b / rounds)} after ${Math.round(a / rounds)} bare ${Math.round(z / rounds)} req/s | before÷bare ${(b / z).toFixed(2)} after÷bare ${(a / z).toFixed(2)} after÷before ${(a / b).toFixed(2)} | load ${loadavg()[0].toFixed(1)}`,
  );
} finally {
  for (const s of Object.values(servers)) s.child.kill("SIGKILL");
}
