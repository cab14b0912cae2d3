/** What a server's own bench module (servers/<name>/bench/latency.ts) gets: start it, call it, time pairs. */
import { f1, type Proc, pct, post, series, start } from "./lib.ts";

export interface BenchContext {
  start(env: Record<string, string>): Promise<Proc>;
  call(p: Proc, tool: string, input: Record<string, unknown>): Promise<void>;
  /** p50/p99 of a tool against the data source underneath, measured the same way, back to back. */
  pair(name: string, tool: () => Promise<unknown>, sourceLabel: string, source: () => Promise<unknown>): Promise<void>;
}

export interface ServerBench {
  benchLatency?(b: BenchContext): Promise<void>;
  /** The world the generic figures (MCP cost, RSS curve) run in, when the example calls need one (a booted systemd). */
  world?(): Promise<{ env: Record<string, string>; close(): Promise<void> }>;
  cheapCall?(): Promise<{ tool: string; args: Record<string, unknown>; close(): void }>;
}

export function benchContext(node: string, entry: string, n: number): BenchContext {
  return {
    start: (env) => start(node, [entry], env),
    call: (p, tool, input) => post(`${p.url}/actions/${tool}`, input),
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
