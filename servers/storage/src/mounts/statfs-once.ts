/**
 * statfs with one call in flight per mount point. A stalled network mount holds the libuv thread that asked;
 * asking again would hold another, until the pool is gone and every file operation of the server waits. So a
 * mount that has not answered yet is not asked twice: later callers wait on the same promise, within their
 * own deadline.
 */
import type { BigIntStatsFs } from "node:fs";
import { statfs } from "node:fs/promises";

const inFlight = new Map<string, Promise<BigIntStatsFs>>();

export function statfsOnce(mount: string): Promise<BigIntStatsFs> {
  const pending = inFlight.get(mount);
  if (pending) return pending;
  const p = statfs(mount, { bigint: true }).finally(() => inFlight.delete(mount));
  inFlight.set(mount, p);
  return p;
}

/** Resolves "timeout" after ms, or when signal aborts; the timer never outlives the race. */
export function withDeadline<T>(p: Promise<T>, ms: number, signal: AbortSignal): Promise<T | "timeout"> {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener("abort", onAbort);
    };
    const onAbort = () => {
      done();
      resolve("timeout");
    };
    const t = setTimeout(onAbort, Math.max(1, ms));
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        done();
        resolve(v);
      },
      (e: unknown) => {
        done();
        reject(e);
      },
    );
  });
}
