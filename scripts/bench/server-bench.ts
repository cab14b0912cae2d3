/**
 * The BenchContext a server's own bench module (servers/<name>/bench/latency.ts) gets: start it, call it, and
 * time a tool against the command a user would type or the source underneath in interleaved pairs (p50 and p95,
 * ours ÷ theirs).
 */
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import type { BenchContext } from "@roadnerd/testkit";
import { get, loadavg, p5095, pairs, pct, post, ratios, start, withOwnSysfs } from "./lib.ts";

/** The program on PATH, or undefined: what the bench line then says instead of a figure. */
function installed(program: string): boolean {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    try {
      accessSync(join(dir, program), constants.X_OK);
      return true;
    } catch {}
  }
  return false;
}

/** Run argv as a shell would (fork/exec, stdin /dev/null, output discarded); rejects unless it exits 0. */
function runCommand(argv: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0] ?? "", argv.slice(1), { stdio: "ignore" });
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${argv.join(" ")}: exit ${code}`))));
  });
}

/** argv as a user would read it: arguments with spaces or quotes quoted. */
const shown = (argv: readonly string[]) => argv.map((a) => (/[\s'"%{}]/.test(a) ? `'${a}'` : a)).join(" ");

/** n pairs at most, and no more than budgetMs of pairs per tool once 10 are in (a du of a big tree is slow). */
export function benchContext(node: string, entry: string, n: number, budgetMs: number): BenchContext {
  const print = (name: string, a: number[], label: string, b: number[], verdict: string) =>
    console.log(
      `  ${name.padEnd(21)} ${p5095(a)} ms | ${label.padEnd(30)} ${p5095(b)} ms | ${verdict} (${a.length} pairs, ${loadavg()})`,
    );
  const ctx: BenchContext = {
    // Its own sysfs: iface_info and route_info read /sys as they would on the host.
    start: (env, wrap) => start(node, [entry], env, wrap ? (argv) => [...wrap, ...argv] : withOwnSysfs),
    call: (server, tool, input, status) => post(`${server.url}/actions/${tool}`, input, {}, status),
    floor: (server) => get(`${server.url}/healthz`),
    async pair(name, tool, sourceLabel, source, opts = {}) {
      // A line against the HTTP floor is about the steady per-call cost (a few ms a pair): both sides warmed
      // well past the JIT's tiers first, then more pairs; a new process's first calls are attach's (section 1).
      const floorLine = opts.withinMs !== undefined;
      const { a, b } = await pairs(tool, source, {
        n: floorLine ? Math.max(n, 100) : n,
        budgetMs,
        ...(floorLine ? { warmup: 300 } : {}),
      });
      if (opts.withinMs !== undefined) {
        const over = pct(a, 50) - pct(b, 50);
        const mark = over <= opts.withinMs ? "" : "!";
        print(name, a, sourceLabel, b, `p50 +${over.toFixed(2)} ms${mark} (target ≤ +${opts.withinMs})`);
      } else if (opts.floor || opts.info) {
        const label = opts.floor ? `${sourceLabel} (floor)` : sourceLabel;
        print(name, a, label, b, `${ratios(a, b, { p50: Infinity, p95: Infinity })} info`);
      } else print(name, a, sourceLabel, b, ratios(a, b));
    },
    async pairCommand(name, tool, argv, opts = {}) {
      const { alt, info } = opts;
      const use = [argv, alt].find((c) => c && installed(c[0] ?? ""));
      const missing = [argv, alt].filter((c) => c && c !== use).map((c) => c?.[0]);
      const note = missing.length ? ` (${missing.join(", ")} not installed)` : "";
      if (!use) {
        console.log(`  ${name.padEnd(21)} ${shown(argv)}: not installed (Debian 12 base + setup.sh), no command line`);
        return;
      }
      await ctx.pair(name, tool, `${shown(use)}${note}`, () => runCommand(use), { info });
    },
  };
  return ctx;
}
