/** What every bench section shares: starting processes on loopback, timing series, percentiles, load, RSS. */
import type { ChildProcess } from "node:child_process";
import { spawnListening } from "@roadnerd/testkit";
import autocannon from "autocannon";

export const quick = process.argv.includes("--quick");

export const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
export const f1 = (x: number) => x.toFixed(1);

export function pct(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
}

export interface Proc {
  url: string;
  pid: number;
  child: ChildProcess;
  /** SIGKILL: the bench does not wait. */
  kill(): void;
}

/** Every process this bench starts, killed on exit even if the bench fails half-way. */
const children = new Set<ChildProcess>();
process.once("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(130));

/** Start `node args…` with an explicit environment (nothing from the developer's shell) and wait for `listening`. */
export async function start(node: string, args: string[], env: Record<string, string> = {}): Promise<Proc> {
  const { url, pid, child } = await spawnListening([node, ...args], {
    env: { LOG_LEVEL: "warn", ...env },
    timeoutMs: 20_000,
  });
  children.add(child);
  child.once("exit", () => children.delete(child));
  return { url, pid, child, kill: () => child.kill("SIGKILL") };
}

/** n timed runs after a short warm-up. */
export async function series(fn: () => Promise<unknown>, n: number): Promise<number[]> {
  for (let i = 0; i < Math.min(20, n); i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    out.push(ms(t0));
  }
  return out;
}

export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<void> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${text.slice(0, 200)}`);
}

export interface Load {
  rps: number;
  non2xx: number;
}

/** autocannon for `seconds` at `connections`. */
export async function load(
  opts: { url: string; method?: "GET" | "POST"; headers?: Record<string, string>; body?: string },
  seconds: number,
  connections = 16,
): Promise<Load> {
  const r = await autocannon({ ...opts, connections, duration: seconds });
  return { rps: r.requests.average, non2xx: r.non2xx };
}

export { rssMb } from "@roadnerd/conventions/testing";
