/** The BenchContext a server's own bench module (servers/<name>/bench/latency.ts) gets: start it, call it, time pairs. */
import type { BenchContext } from "@roadnerd/testkit";
import { f1, pct, post, series, start } from "./lib.ts";

export function benchContext(node: string, entry: string, n: number): BenchContext {
  return {
    start: (env) => start(node, [entry], env),
    call: (server, tool, input) => post(`${server.url}/actions/${tool}`, input),
    async pair(name, tool, sourceLabel, source) {
      const t = await series(tool, n);
      const s = await series(source, n);
      const [t50, s50] = [pct(t, 50), pct(s, 50)];
      console.log(
        `  ${name.padEnd(21)} p50 ${f1(t50).padStart(6)} p99 ${f1(pct(t, 99)).padStart(6)} ms | ${sourceLabel.padEnd(30)} p50 ${f1(s50).padStart(6)} p99 ${f1(pct(s, 99)).padStart(6)} ms | ×${(t50 / s50).toFixed(2)}`,
      );
    },
  };
}
