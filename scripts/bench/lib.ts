/** What every bench section shares: starting processes on loopback, timing series, percentiles, load, RSS. */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
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
  /** SIGTERM, and wait for the exit (a graceful exit writes Node's compile cache). */
  stop(): Promise<void>;
}

/** Every process this bench starts, killed on exit even if the bench fails half-way. */
const children = new Set<ChildProcess>();
process.once("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(130));

/** Start `node args…` with an explicit environment (nothing from the developer's shell) and wait for `listening`. */
export function start(node: string, args: string[], env: Record<string, string> = {}): Promise<Proc> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, args, {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "pipe", "ignore"],
    });
    children.add(child);
    child.once("exit", () => children.delete(child));
    let buf = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error("no listening line"));
    }, 20_000);
    child.stdout?.on("data", (d: Buffer) => {
      buf += d.toString();
      for (const line of buf.split("\n")) {
        if (!line.includes('"listening"')) continue;
        clearTimeout(timer);
        const url = (JSON.parse(line) as { url: string }).url;
        child.stdout?.removeAllListeners("data");
        child.stdout?.resume();
        resolve({
          url,
          pid: child.pid as number,
          child,
          kill: () => child.kill("SIGKILL"),
          stop: () =>
            new Promise<void>((done) => {
              if (child.exitCode !== null) return done();
              child.once("exit", () => done());
              child.kill("SIGTERM");
            }),
        });
        return;
      }
    });
  });
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
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

/** autocannon for `seconds` at `connections`. */
export async function load(
  opts: { url: string; method?: "GET" | "POST"; headers?: Record<string, string>; body?: string },
  seconds: number,
  connections = 16,
): Promise<Load> {
  const r = await autocannon({ ...opts, connections, duration: seconds });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors };
}

export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1] ?? 0) / 1024;
}
