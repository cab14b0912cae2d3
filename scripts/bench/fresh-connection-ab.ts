// A call on a fresh connection (what curl or a script without keep-alive pays: the server looks up the peer's
// uid in the kernel's socket tables before it answers, docs/security.md), A/B between builds of one server:
// rounds alternate the builds; each round makes N calls, each on its own connection, and N /healthz the same way
// (not judged: the floor). Prints p50/p95 per build and the server's CPU per call (its utime+stime).
//   node scripts/sealed.mjs scripts/run-ts.mjs scripts/bench/fresh-connection-ab.ts ROUNDS N TOOL A/main.js B/main.js…

import { readFileSync } from "node:fs";
import { request } from "node:http";
import { f1, loadavg, pct, start } from "./lib.ts";

const [roundsArg = "5", nArg = "30", tool = "dns_config_get", ...mains] = process.argv.slice(2);
const cpuMs = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
};

/** One request on a connection of its own (agent: false closes it after), timed from connect to the last byte. */
function once(url: string, path: string, body?: string): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, {
      agent: false,
      method: body === undefined ? "GET" : "POST",
      headers: body === undefined ? {} : { "content-type": "application/json" },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(performance.now() - t0));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const builds = [];
for (const main of mains) builds.push(await start(process.execPath, [main]));
const calls = builds.map(() => [] as number[]);
const floors = builds.map(() => [] as number[]);
const cpu = builds.map(() => 0);
for (let r = 0; r < Number(roundsArg); r++) {
  const order = r % 2 ? [...builds.keys()].reverse() : [...builds.keys()];
  for (const k of order) {
    const b = builds[k];
    if (!b) continue;
    const c0 = cpuMs(b.pid);
    for (let i = 0; i < Number(nArg); i++) {
      calls[k]?.push(await once(b.url, `/actions/${tool}`, "{}"));
      floors[k]?.push(await once(b.url, "/healthz"));
    }
    cpu[k] = (cpu[k] ?? 0) + cpuMs(b.pid) - c0;
  }
  console.log(`round ${r + 1} (${loadavg()})`);
}
for (const [k, main] of mains.entries()) {
  const xs = calls[k] ?? [];
  console.log(
    `${main.replace(/^\/work\//, "").padEnd(52)} ${tool} on a fresh connection p50 ${f1(pct(xs, 50))} p95 ${f1(pct(xs, 95))} ms; /healthz p50 ${f1(pct(floors[k] ?? [], 50))} ms; server CPU per call + /healthz ${f1((cpu[k] ?? 0) / xs.length)} ms`,
  );
}
for (const b of builds) b.kill();
