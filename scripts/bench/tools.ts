// Section 3 of `pnpm bench` alone (tools against the command a user would type), for working on one server:
//   node scripts/sealed.mjs scripts/run-ts.mjs scripts/bench/tools.ts [server…] [--ab=<dir> --rounds=N]
// --ab=<dir>: A/B in the same run, rounds alternating: each server's bundle at servers/<name>/<dir>/dist/main.js
// (a build copied aside, e.g. main's) against servers/<name>/dist/main.js; prints each round's lines and the
// process CPU time (utime+stime) of the whole run.
import { join } from "node:path";
import { REPO_ROOT, selectedServers } from "@roadnerd/registry";
import type { ServerBench } from "@roadnerd/testkit";
import { loadavg } from "./lib.ts";
import { benchContext } from "./server-bench.ts";

const args = process.argv.slice(2);
const names = args.filter((a) => !a.startsWith("--"));
const ab = args.find((a) => a.startsWith("--ab="))?.slice(5);
const rounds = Number(args.find((a) => a.startsWith("--rounds="))?.slice(9) ?? 1);
const servers = selectedServers().filter((s) => names.length === 0 || names.includes(s.name));
const variants = ab ? [`servers/%s/${ab}/dist/main.js`, "servers/%s/dist/main.js"] : ["servers/%s/dist/main.js"];

for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? variants : [...variants].reverse();
  for (const variant of order) {
    console.log(`\nround ${round + 1}: ${variant} (${loadavg()})`);
    for (const s of servers) {
      const mod = (await import(`../../servers/${s.name}/bench/latency.ts`)) as ServerBench;
      if (!mod.benchLatency) continue;
      console.log(` ${s.name}`);
      await mod.benchLatency(benchContext(process.execPath, join(REPO_ROOT, variant.replace("%s", s.name)), 40, 2_000));
    }
  }
}
