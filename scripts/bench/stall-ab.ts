// The spawn stall of section 2, A/B: builds of the ports server (SOCKETS_SOURCE=ss: listening_sockets spawns `ss`
// on every call), each round measuring each build's own /healthz p99 while 8 calls spawn in it, and the
// external-contention control (the bare bundle's /healthz p99 while another process spawns `ss` 8 at a time), in
// an order that alternates; medians of the rounds, each ÷ the control's median. RSS of each build idle and after.
//   node scripts/sealed.mjs scripts/run-ts.mjs scripts/bench/stall-ab.ts ROUNDS SECONDS A/main.js B/main.js…
import { readFileSync } from "node:fs";
import { buildBareBundle } from "./bare-bundle.ts";
import { externalSpawner, probe } from "./hot-path.ts";
import { f1, loadavg, pct, post, start } from "./lib.ts";

const [roundsArg = "5", secondsArg = "3", ...mains] = process.argv.slice(2);
const rounds = Number(roundsArg);
const seconds = Number(secondsArg);
/** CPU time of a process and the children it has reaped (utime+stime+cutime+cstime), in ms. */
const cpuMs = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1000) / 100;
};
const rss = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024;
const bareBundle = await buildBareBundle();
const bare = await start(process.execPath, [bareBundle.main]);
const builds = [];
for (const main of mains) builds.push(await start(process.execPath, [main], { SOCKETS_SOURCE: "ss" }));
const idleRss = builds.map((b) => rss(b.pid));
const sides = [...builds.map((_, k) => k), -1];
const p99s = sides.map(() => [] as number[]);
const p50s = sides.map(() => [] as number[]);
/** Per build and round: CPU ms (its own and its reaped children's) per spawning call. */
const cpuPerCall = builds.map(() => [] as number[]);
await probe(bare.url, 0.5);
for (const b of builds) await probe(b.url, 0.5);
for (let r = 0; r < rounds; r++) {
  const order = r % 2 ? [...sides].reverse() : sides;
  for (const k of order) {
    let xs: number[];
    if (k < 0) {
      const ext = externalSpawner(["ss", "-Hltnup"]);
      xs = await probe(bare.url, seconds);
      ext.kill("SIGKILL");
    } else {
      const url = builds[k]?.url ?? "";
      const pid = builds[k]?.pid ?? 0;
      let stop = false;
      let calls = 0;
      const cpu0 = cpuMs(pid);
      const loops = Array.from({ length: 8 }, async () => {
        for (let i = 0; i < 100_000 && !stop; i++) {
          await post(`${url}/actions/listening_sockets`, { timeout_ms: 10_000 }).catch(() => undefined);
          calls += 1;
        }
      });
      xs = await probe(url, seconds);
      stop = true;
      await Promise.all(loops);
      cpuPerCall[k]?.push((cpuMs(pid) - cpu0) / Math.max(1, calls));
    }
    const at = sides.indexOf(k);
    p99s[at]?.push(pct(xs, 99));
    p50s[at]?.push(pct(xs, 50));
  }
  console.log(`round ${r + 1}: p99 ${p99s.map((xs) => f1(xs[r] ?? Number.NaN)).join(" / ")} ms (${loadavg()})`);
}
const med = (xs: number[]) => pct(xs, 50);
const control = med(p99s[sides.length - 1] ?? []);
for (const [k, main] of mains.entries()) {
  const b = builds[k];
  console.log(
    `${main.split("/").slice(-4).join("/").padEnd(48)} /healthz p99 median ${f1(med(p99s[k] ?? []))} ms (p50 ${f1(med(p50s[k] ?? []))}) ÷ control ${(med(p99s[k] ?? []) / control).toFixed(2)}×; CPU per call ${(med(cpuPerCall[k] ?? [])).toFixed(2)} ms; RSS idle ${f1(idleRss[k] ?? 0)} MiB, after ${f1(b ? rss(b.pid) : 0)} MiB`,
  );
}
console.log(
  `control: bare /healthz p99 median ${f1(control)} ms (p50 ${f1(med(p50s[sides.length - 1] ?? []))}) while another process spawns 8 at a time`,
);
for (const b of builds) b.kill();
bare.kill();
bareBundle.remove();
