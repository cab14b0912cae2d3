/** What every bench section shares: starting processes on loopback, timing series, percentiles, load, RSS. */
import { type ChildProcess, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { loadavg as osLoadavg } from "node:os";
import { spawnListening } from "@roadnerd/testkit";
import autocannon from "autocannon";
import { request } from "undici";

/** `--full`: the long trees, the soaks and more rounds (~30 min); the default run is sized to end within 5 min. */
export const full = process.argv.includes("--full") || process.argv.includes("--long"); // --long: its old name

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
export async function start(
  node: string,
  args: string[],
  env: Record<string, string> = {},
  wrap: (argv: string[]) => string[] = (argv) => argv,
): Promise<Proc> {
  const { url, pid, child } = await spawnListening(wrap([node, ...args]), {
    env: { LOG_LEVEL: "warn", ...env },
    timeoutMs: 20_000,
  });
  children.add(child);
  child.once("exit", () => children.delete(child));
  return { url, pid, child, kill: () => child.kill("SIGKILL") };
}

/**
 * The sealed run's /sys is the host's (a new network namespace does not remount it), so the network tools that
 * read /sys would fall back to `ip`. A server started through this gets a private mount namespace with the sysfs
 * of its own network namespace, as on a real machine; unchanged where `unshare -m` is not allowed.
 */
const canRemount = spawnSync("unshare", ["-m", "true"], { stdio: "ignore" }).status === 0;
export function withOwnSysfs(argv: string[]): string[] {
  if (!canRemount) return argv;
  return [
    "unshare",
    "-m",
    "--propagation",
    "private",
    "sh",
    "-c",
    'mount -t sysfs sysfs /sys && exec "$0" "$@"',
    ...argv,
  ];
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

/**
 * Interleaved pairs (order alternating, so drift on a shared machine hits both sides alike) until `n` pairs or
 * `budgetMs` is spent, with at least `min` pairs; after a short warm-up of each side.
 */
export async function pairs(
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
  opts: { n: number; budgetMs: number; min?: number; warmup?: number },
): Promise<{ a: number[]; b: number[] }> {
  for (let i = 0; i < (opts.warmup ?? Math.min(10, opts.n)); i++) {
    await a();
    await b();
  }
  const out = { a: [] as number[], b: [] as number[] };
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < opts.n; i++) {
    if (i >= (opts.min ?? 10) && ms(t0) > opts.budgetMs) break;
    for (const side of i % 2 ? (["a", "b"] as const) : (["b", "a"] as const)) {
      const t = process.hrtime.bigint();
      await (side === "a" ? a() : b());
      out[side].push(ms(t));
    }
  }
  return out;
}

/** `p50 1.2 p95 3.4` of a series. */
export const p5095 = (xs: readonly number[]) => `p50 ${f1(pct(xs, 50)).padStart(6)} p95 ${f1(pct(xs, 95)).padStart(6)}`;

/** ours ÷ baseline at p50 and p95, marked against the limits (≤ 1.0 at p50, ≤ 1.2 at p95). */
export function ratios(ours: readonly number[], base: readonly number[], limits = { p50: 1.0, p95: 1.2 }): string {
  const r50 = pct(ours, 50) / pct(base, 50);
  const r95 = pct(ours, 95) / pct(base, 95);
  const mark = (r: number, lim: number) => `${r.toFixed(2)}×${r <= lim ? "" : "!"}`;
  return `p50 ${mark(r50, limits.p50)} p95 ${mark(r95, limits.p95)}`;
}

/** The 1-minute load average, printed next to every figure: on a shared machine it says how far to trust it. */
export const loadavg = (): string => `load ${osLoadavg()[0]?.toFixed(1)}`;

/**
 * A POST as RoadNerd's own callers make it (undici's `request`: @roadnerd/client, the gateway), the whole answer
 * read; rejects unless the status is `status`. (Node's fetch costs the client ~0.3 ms more a call, more than the
 * differences the floor lines look for.)
 */
export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  status = 200,
): Promise<void> {
  const res = await request(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode !== status) throw new Error(`${url}: ${res.statusCode} ${text.slice(0, 200)}`);
}

/** The same POST, its status and text given back whatever the status (the /mcp line compares answers). */
export async function postText(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  const res = await request(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.statusCode, text: await res.body.text() };
}

/** GET with the same client, the whole answer read; rejects unless 200. */
export async function get(url: string): Promise<void> {
  const res = await request(url);
  await res.body.arrayBuffer();
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode}`);
}

export interface Load {
  rps: number;
  non2xx: number;
  /** Requests answered in the run. */
  requests: number;
}

/** autocannon for `seconds` at `connections`. */
export async function load(
  opts: { url: string; method?: "GET" | "POST"; headers?: Record<string, string>; body?: string },
  seconds: number,
  connections = 16,
): Promise<Load> {
  const r = await autocannon({ ...opts, connections, duration: seconds });
  return { rps: r.requests.average, non2xx: r.non2xx, requests: r.requests.total };
}

export { rssMb } from "@roadnerd/conventions/testing";

/** A process's CPU time so far (utime + stime from /proc/<pid>/stat), in µs. */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}
