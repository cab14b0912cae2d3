/**
 * The BenchContext a server's own bench module (servers/<name>/bench/latency.ts) gets: start it, call it, and
 * time a tool against the command or source underneath in interleaved pairs (p50 and p95, ours ÷ theirs).
 */
import type { BenchContext } from "@roadnerd/testkit";
import { loadavg, p5095, pairs, post, ratios, start, withOwnSysfs } from "./lib.ts";

/** n pairs at most, and no more than budgetMs of pairs per tool once 10 are in (a du of a big tree is slow). */
export function benchContext(node: string, entry: string, n: number, budgetMs: number): BenchContext {
  return {
    // Its own sysfs: iface_info and route_info read /sys as they would on the host.
    start: (env) => start(node, [entry], env, withOwnSysfs),
    call: (server, tool, input) => post(`${server.url}/actions/${tool}`, input),
    async pair(name, tool, sourceLabel, source) {
      const { a, b } = await pairs(tool, source, { n, budgetMs });
      console.log(
        `  ${name.padEnd(21)} ${p5095(a)} ms | ${sourceLabel.padEnd(30)} ${p5095(b)} ms | ${ratios(a, b)} (${a.length} pairs, ${loadavg()})`,
      );
    },
  };
}
