// GC per call of one tool on built servers: each started with --trace-gc, past its start trim (ADR 0071),
// warmed 2 s, then 4 s of POST /actions/<tool> at CONNS connections; prints scavenges and mark-compacts per
// 1,000 calls and their pause per call. Builds in the order given, one after the other.
//   unshare -n sh -c 'ip link set lo up; node scripts/bench/gc-per-call.mjs resolved_status BEFORE/main.js servers/dns-config/dist/main.js'
// Env: CONNS (default 16), ARGS (the tool's JSON arguments, default {}).
import { createRequire } from "node:module";
import { setTimeout as sleep } from "node:timers/promises";
import { startBuilt, toolCallRequests } from "./built-server.mjs";

const require = createRequire(new URL("../../package.json", import.meta.url));
const autocannon = require("autocannon");
const [tool, ...mains] = process.argv.slice(2);
const conns = Number(process.env.CONNS ?? 16);
process.env.NODEARGS = `--trace-gc ${process.env.NODEARGS ?? ""}`.trim();
for (const main of mains) {
  const s = await startBuilt(main);
  const lines = [];
  let on = false;
  let partial = "";
  // V8's trace goes to stdout, one line per collection; a chunk may end mid-line.
  s.child.stdout.on("data", (d) => {
    const text = partial + d.toString();
    const cut = text.lastIndexOf("\n");
    partial = text.slice(cut + 1);
    if (on)
      lines.push(
        ...text
          .slice(0, cut + 1)
          .split("\n")
          .filter((l) => l.includes(" ms: ")),
      );
  });
  // Past the start's trim (the first quiet second of its first 5 s), as pnpm bench's /healthz section waits.
  await sleep(5500);
  const spec = toolCallRequests(s.url, tool, JSON.parse(process.env.ARGS ?? "{}")).actions;
  await autocannon({ ...spec, connections: conns, duration: 2 });
  on = true;
  const r = await autocannon({ ...spec, connections: conns, duration: 4 });
  on = false;
  const kinds = {};
  for (const l of lines) {
    const m = / ms: ([A-Za-z-]+)[^,]*, pooled: [^,]*, ([\d.]+) \/ [\d.]+ ms/.exec(l);
    if (!m) continue;
    kinds[m[1]] ??= { n: 0, ms: 0 };
    kinds[m[1]].n += 1;
    kinds[m[1]].ms += Number(m[2]);
  }
  const n = r.requests.total;
  const parts = Object.entries(kinds).map(
    ([k, v]) => `${k} ${((v.n / n) * 1000).toFixed(1)} per 1,000 calls, ${((v.ms * 1000) / n).toFixed(1)} µs a call`,
  );
  console.log(`${main.split("/").slice(-3).join("/").padEnd(36)} ${tool}: ${n} calls; ${parts.join("; ")}`);
  s.child.kill("SIGKILL");
}
