/**
 * Deadlines that scale with how busy the machine is: a test that must wait on the wall clock (a cold browser,
 * a compiler, /healthz under a load test) waits `ms` on a quiet machine and proportionally longer when more
 * runnable work than cores competes for it (the 1-minute load average over the cores), up to 16×. Read at the
 * call, so a deadline set while the machine is busy gets the room the machine has then.
 */
import { availableParallelism, loadavg } from "node:os";

const MAX_SLOWDOWN = 16;

/** How many times slower than a quiet machine this one is likely to be now (1 when quiet). */
function slowdown(): number {
  const [oneMinute = 0] = loadavg();
  return Math.min(MAX_SLOWDOWN, Math.max(1, oneMinute / availableParallelism()));
}

export function scaledMs(ms: number): number {
  return Math.round(ms * slowdown());
}

/** The kernel's default tool deadline (2 s) and its ceiling (15 s): a tool's `timeout_ms` as the machine has it now. */
const DEFAULT_TOOL_TIMEOUT_MS = 2000;
const MAX_TOOL_TIMEOUT_MS = 15_000;

/**
 * `{ timeout_ms }` for a call whose subject is not its deadline: the default on a quiet machine, stretched with
 * the load (a TLS handshake or five probes in a row can pass 2 s on a busy 2-core machine). Spread it first, so
 * a test's own `timeout_ms` still wins.
 */
export function scaledDeadline(): { timeout_ms: number } {
  return { timeout_ms: Math.min(MAX_TOOL_TIMEOUT_MS, scaledMs(DEFAULT_TOOL_TIMEOUT_MS)) };
}

/**
 * Polls `what` every 25 ms until it holds or a deadline of `ms` (scaled with the load) passes; whether it
 * holds at the end. A bounded wait for a state another process or socket reaches on its own.
 */
export async function pollUntil(what: () => boolean, ms: number): Promise<boolean> {
  const deadline = performance.now() + scaledMs(ms);
  while (!what() && performance.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  return what();
}
