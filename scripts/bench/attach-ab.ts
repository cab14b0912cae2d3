/**
 * Attach A/B: spawn → /healthz answered for several bundles, interleaved (order rotating each round), each
 * cold (an empty compile cache; a server's code cache not read) then warm (the bare bundle: the compile cache
 * its previous start flushed; a server: the code cache `pnpm build` wrote, ADR 0062), with the process's own CPU
 * time until that answer (utime + stime, mean: what a loaded machine inflates least). The first bundle is the
 * baseline the others are divided by. `pnpm bench` section 1 is this against the bare bundle only.
 *   node scripts/sealed.mjs scripts/run-ts.mjs scripts/bench/attach-ab.ts ROUNDS BARE/main.mjs A/main.js B/main.js…
 * (a BARE of "bare" builds the bare fastify+zod bundle first).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildBareBundle } from "./bare-bundle.ts";
import { f1, loadavg, ms, pct, start } from "./lib.ts";

function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
}

async function attachOnce(main: string, cache: string, cold: boolean): Promise<{ wall: number; cpu: number }> {
  const t0 = process.hrtime.bigint();
  // Cold: Node's compile cache empty (the bare bundle) and a server's code cache not read (ADR 0062).
  const p = await start(process.execPath, [main], {
    NODE_COMPILE_CACHE: cache,
    ...(cold ? { ROADNERD_CODE_CACHE: "off" } : {}),
  });
  await (await fetch(`${p.url}/healthz`)).arrayBuffer();
  const wall = ms(t0);
  const cpu = cpuMs(p.pid);
  p.kill();
  await new Promise((r) => p.child.once("exit", r));
  return { wall, cpu };
}

const [rounds = "6", ...given] = process.argv.slice(2);
const bare = given[0] === "bare" ? await buildBareBundle() : undefined;
const mains = bare ? [bare.main, ...given.slice(1)] : given;
type Series = Record<"cold" | "warm" | "coldCpu" | "warmCpu", number[]>;
const out = mains.map((): Series => ({ cold: [], warm: [], coldCpu: [], warmCpu: [] }));
try {
  for (let i = 0; i < Number(rounds); i++) {
    for (let k = 0; k < mains.length; k++) {
      const j = (i + k) % mains.length;
      const cache = mkdtempSync(join(tmpdir(), "rn-attach-ab-"));
      try {
        const cold = await attachOnce(mains[j] as string, cache, true);
        const warm = await attachOnce(mains[j] as string, cache, false);
        const s = out[j] as Series;
        s.cold.push(cold.wall);
        s.coldCpu.push(cold.cpu);
        s.warm.push(warm.wall);
        s.warmCpu.push(warm.cpu);
      } finally {
        rmSync(cache, { recursive: true, force: true });
      }
    }
  }
  const base = out[0] as Series;
  // Wall at p50; CPU as a mean (clock ticks of 10 ms: a median would quantize).
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const at = (s: Series, k: keyof Series) => (k.endsWith("Cpu") ? mean(s[k]) : pct(s[k], 50));
  const ratio = (s: Series, k: keyof Series) => (at(s, k) / at(base, k)).toFixed(2);
  mains.forEach((m, j) => {
    const s = out[j] as Series;
    console.log(
      `${(j === 0 && bare ? "bare fastify+zod" : m).padEnd(48)} warm p50 ${f1(pct(s.warm, 50))} ms (${ratio(s, "warm")}×, CPU ${f1(at(s, "warmCpu"))} ms ${ratio(s, "warmCpu")}×) cold ${f1(pct(s.cold, 50))} ms (${ratio(s, "cold")}×, CPU ${ratio(s, "coldCpu")}×)`,
    );
  });
  console.log(`${rounds} rounds, ${loadavg()}`);
} finally {
  bare?.remove();
}
