/**
 * Deadlines that scale with how busy the machine is: a test that must wait on the wall clock (a cold browser,
 * a compiler, /healthz under a load test) waits `ms` on a quiet machine and proportionally longer when more
 * runnable work than cores competes for it (the 1-minute load average over the cores), up to 8×. Read at the
 * call, so a deadline set while the machine is busy gets the room the machine has then.
 */
import { availableParallelism, loadavg } from "node:os";

const MAX_SLOWDOWN = 8;

/** How many times slower than a quiet machine this one is likely to be now (1 when quiet). */
function slowdown(): number {
  const [oneMinute = 0] = loadavg();
  return Math.min(MAX_SLOWDOWN, Math.max(1, oneMinute / availableParallelism()));
}

export function scaledMs(ms: number): number {
  return Math.round(ms * slowdown());
}
