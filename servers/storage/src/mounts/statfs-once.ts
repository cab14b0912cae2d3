/**
 * statfs with one call in flight per mount point, per runtime (ctx.use(statfsCalls)). A stalled network mount
 * holds the libuv thread that asked; asking again would hold another, until the pool is gone and every file
 * operation of the server waits. So a mount that has not answered yet is not asked twice: later callers join
 * the same call (the kernel's single-flight), each within its own deadline (withDeadline).
 */
import type { BigIntStatsFs } from "node:fs";
import { statfs } from "node:fs/promises";
import { createSharedCalls } from "@roadnerd/conventions";
import { defineResource } from "../kit.ts";

export interface StatfsCalls {
  /** statfs(2) of `mount`, joining the call already in flight for it. */
  statfs(mount: string): Promise<BigIntStatsFs>;
  close(): Promise<void>;
}

export function createStatfsCalls(): StatfsCalls {
  const calls = createSharedCalls();
  return {
    statfs: (mount) => calls.run(mount, undefined, 0, () => statfs(mount, { bigint: true })),
    close: () => calls.close(),
  };
}

export const statfsCalls = defineResource({
  name: "statfs calls",
  create: () => createStatfsCalls(),
  // A stalled statfs cannot be cancelled: closing refuses new ones and does not hold the shutdown for it.
  close: (calls) => {
    void calls.close();
  },
});

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
