/**
 * Bounds on concurrent work: a counter with a limit. Calls and streams are refused at the bound (E_BUSY, a
 * 503 with Retry-After); subprocesses wait their turn within the caller's deadline, in order.
 */
import { DiagError } from "../errors/errors.ts";

export type Release = () => void;

/** What /metrics reads of a bound. */
export interface BoundState {
  readonly max: number;
  readonly active: number;
  /** Callers waiting for a slot (subprocesses). */
  readonly waiting: number;
}

export interface Limiter extends BoundState {
  /** A slot now, or E_BUSY naming `what`. */
  take(what: string): Release;
  /** E_BUSY now if there is no free slot (the slot itself is taken later). */
  check(what: string): void;
  /** A slot when one frees, or E_TIMEOUT if `signal` aborts or `timeoutMs` passes first. */
  wait(what: string, signal: AbortSignal | undefined, timeoutMs: number): Promise<Release>;
}

/** Seconds a refused caller is told to wait: long enough for a typical call to finish. */
export const RETRY_AFTER_S = 1;

/** `onRefuse` hears each E_BUSY (the metrics' refusal counter). */
export function createLimiter(max: number, kind: string, onRefuse?: () => void): Limiter {
  let active = 0;
  const queue: Array<() => void> = [];
  const grant = (): Release => {
    active += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      active -= 1;
      queue.shift()?.();
    };
  };
  return {
    max,
    get active() {
      return active;
    },
    get waiting() {
      return queue.length;
    },
    take(what) {
      this.check(what);
      return grant();
    },
    check(what) {
      if (active >= max) {
        onRefuse?.();
        throw new DiagError("E_BUSY", `${what}: ${max} ${kind} already running here`, {
          hint: `retry in ${RETRY_AFTER_S} s`,
          retryAfterS: RETRY_AFTER_S,
        });
      }
    },
    wait(what, signal, timeoutMs) {
      if (active < max && queue.length === 0) return Promise.resolve(grant());
      return new Promise<Release>((resolve, reject) => {
        const give = () => {
          cleanup();
          resolve(grant());
        };
        const fail = () => {
          cleanup();
          const at = queue.indexOf(give);
          if (at >= 0) queue.splice(at, 1);
          reject(
            new DiagError("E_TIMEOUT", `${what}: no free ${kind} slot in time (${max} busy, timeout ${timeoutMs} ms)`),
          );
        };
        const timer = setTimeout(fail, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", fail);
        };
        if (signal?.aborted) return fail();
        signal?.addEventListener("abort", fail, { once: true });
        queue.push(give);
      });
    },
  };
}
