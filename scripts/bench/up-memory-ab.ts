/**
 * `roadnerd up`'s memory, two builds in alternating rounds (one process each): Σ USS idle, after `calls` mixed
 * calls, after a quiet spell. `node scripts/sealed.mjs scripts/run-ts.mjs scripts/bench/up-memory-ab.ts ROUNDS
 * CALLS QUIET_S A/packages/orchestrator/dist/main.js B/packages/orchestrator/dist/main.js`; a main may carry
 * variables for `up`'s environment after a `+`: `dist/main.js+MALLOC_ARENA_MAX=2` (the same build with and without).
 */
import { loadavg } from "node:os";
import { measureUp } from "./up-memory.ts";

const [rounds = "3", calls = "1000", quiet = "20", ...mains] = process.argv.slice(2);
const f = (x: number) => x.toFixed(1).padStart(6);
for (let r = 0; r < Number(rounds); r += 1) {
  const order = r % 2 === 0 ? mains : [...mains].reverse();
  for (const main of order) {
    const [path = "", ...env] = main.split("+");
    process.env.UP_MAIN = path;
    process.env.UP_ENV = env.join(" ");
    const m = await measureUp([], Number(calls), Number(quiet));
    console.log(
      `round ${r + 1} ${main.padEnd(60)} idle ${f(m.idle)}${m.warm === undefined ? "" : ` warm ${f(m.warm)}`} after ${f(m.afterCalls)} quiet ${f(m.afterQuiet)} served ${m.served} (load ${loadavg()[0]?.toFixed(1)})`,
    );
  }
}
