// Section 5 (top_consumers against `du -x -d 2`), A/B: builds of the storage server and du, in an order that
// alternates each round, on one tree (warm: each side walks it once first). Per side: wall p50 and mean CPU per
// walk (a server's own + its walker children's, ADR 0059; du's as a reaped child), the load average of each
// round, and each build's sizes against du's (first round).
//   node scripts/sealed.mjs scripts/run-ts.mjs scripts/bench/du-ab.ts ROUNDS PATH A/main.js B/main.js…
import { compare, cpuMs, du, topConsumers } from "./du.ts";
import { f1, loadavg, ms, pct, start } from "./lib.ts";

const [roundsArg = "6", path = "/usr", ...mains] = process.argv.slice(2);
const rounds = Number(roundsArg);
const builds = [];
for (const main of mains) builds.push(await start(process.execPath, [main], { STORAGE_ROOTS: path }));
const sides = [-1, ...builds.map((_, k) => k)];
const wall = sides.map(() => [] as number[]);
const cpu = sides.map(() => [] as number[]);
const sizes = builds.map(() => "");
const loads: string[] = [];
// Warm: the page cache, and each server's walker children (started by a first long walk, kept while busy).
await du(path);
for (const b of builds) await topConsumers(b, path);
for (let r = 0; r < rounds; r++) {
  const order = r % 2 ? [...sides].reverse() : sides;
  for (const k of order) {
    const t = process.hrtime.bigint();
    const b = builds[k];
    if (b) {
      const c = cpuMs(b.pid);
      const walk = await topConsumers(b, path);
      wall[k + 1]?.push(ms(t));
      cpu[k + 1]?.push(cpuMs(b.pid) - c);
      if (r === 0) sizes[k] = compare(path, walk, await du(path));
    } else {
      const c = cpuMs("children");
      await du(path);
      wall[0]?.push(ms(t));
      cpu[0]?.push(cpuMs("children") - c);
    }
  }
  loads.push(loadavg());
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const duWall = pct(wall[0] ?? [], 50);
console.log(`du -x -d 2 ${path}: wall p50 ${f1(duWall)} ms, CPU ${f1(mean(cpu[0] ?? []))} ms a walk`);
builds.forEach((_, k) => {
  const w = pct(wall[k + 1] ?? [], 50);
  console.log(
    `${mains[k]}: wall p50 ${f1(w)} ms → ${(duWall / w).toFixed(2)}× du's speed; CPU ${f1(mean(cpu[k + 1] ?? []))} ms a walk (du's ÷ ours ${(mean(cpu[0] ?? []) / mean(cpu[k + 1] ?? [])).toFixed(2)}); sizes ${sizes[k] ? `DIFFER: ${sizes[k]}` : "equal to the KiB"}`,
  );
});
console.log(`rounds ${rounds}; per round: ${loads.join(" | ")}`);
console.log(
  `walls (ms): ${sides.map((k, i) => `${k < 0 ? "du" : mains[k]} [${(wall[i] ?? []).map((x) => Math.round(x)).join(" ")}]`).join("; ")}`,
);
for (const b of builds) b.kill();
process.exit(0);
