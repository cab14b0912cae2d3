/**
 * Identical concurrent work runs once. Calls with the same key join the execution already in flight and get
 * its result (single-flight); a tool whose answer is a snapshot of the machine also serves it from a short
 * cache. The shared work is cancelled only when every caller waiting for it has gone, or when it is closed.
 * It is the one single-flight of the code base: the runtime's for tool calls, and a server's own for what its
 * resources share (a read of /proc, a statfs, a browser launch), each made per runtime (resources.ts).
 */
import { DiagError } from "../errors/errors.ts";

interface Flight<T> {
  promise: Promise<T>;
  controller: AbortController;
  waiters: number;
}

export interface SharedCalls {
  /** `work` once per key at a time; `cacheMs` > 0 keeps a success that long. Only new work calls `work`. */
  run<T>(
    key: string,
    signal: AbortSignal | undefined,
    cacheMs: number,
    work: (signal: AbortSignal) => Promise<T>,
  ): Promise<T>;
  /**
   * Refuse new work (E_BUSY), tell the work in flight to stop (its signal aborts with E_BUSY) and resolve once
   * it has settled. Work that cannot be stopped (a stalled statfs) is waited for: don't await it then.
   */
  close(): Promise<void>;
}

/** At most this many cached snapshots; the oldest goes first. */
const MAX_CACHED = 256;

export function createSharedCalls(): SharedCalls {
  const flights = new Map<string, Flight<unknown>>();
  const cache = new Map<string, { value: unknown; expires: number }>();
  let closed = false;

  function cached(key: string): { value: unknown } | undefined {
    const hit = cache.get(key);
    if (!hit) return undefined;
    if (hit.expires > performance.now()) return hit;
    cache.delete(key);
    return undefined;
  }

  function remember(key: string, value: unknown, cacheMs: number): void {
    if (cacheMs <= 0) return;
    cache.delete(key);
    cache.set(key, { value, expires: performance.now() + cacheMs });
    if (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value as string);
  }

  /** This caller's view of a flight: it leaves (and maybe cancels the work) when its own signal aborts. */
  function wait<T>(flight: Flight<T>, signal: AbortSignal | undefined): Promise<T> {
    flight.waiters += 1;
    if (!signal) return flight.promise.finally(() => (flight.waiters -= 1));
    return new Promise<T>((resolve, reject) => {
      let done = false;
      const leave = () => {
        if (done) return;
        done = true;
        flight.waiters -= 1;
        signal.removeEventListener("abort", onAbort);
      };
      const onAbort = () => {
        leave();
        if (flight.waiters === 0) flight.controller.abort(new DiagError("E_TIMEOUT", "every caller went away"));
        reject(new DiagError("E_TIMEOUT", "cancelled by the caller"));
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      flight.promise.then(
        (v) => {
          leave();
          resolve(v);
        },
        (e: unknown) => {
          leave();
          reject(e);
        },
      );
    });
  }

  return {
    run<T>(key: string, signal: AbortSignal | undefined, cacheMs: number, work: (s: AbortSignal) => Promise<T>) {
      if (closed) return Promise.reject(new DiagError("E_BUSY", "the server is closing"));
      const hit = cached(key);
      if (hit) return Promise.resolve(hit.value as T);
      const current = flights.get(key) as Flight<T> | undefined;
      if (current) return wait(current, signal);
      const controller = new AbortController();
      const flight: Flight<T> = { promise: Promise.resolve() as Promise<T>, controller, waiters: 0 };
      flight.promise = (async () => {
        try {
          const value = await work(controller.signal);
          remember(key, value, cacheMs);
          return value;
        } finally {
          flights.delete(key);
        }
      })();
      flights.set(key, flight as Flight<unknown>);
      return wait(flight, signal);
    },
    async close() {
      closed = true;
      cache.clear();
      const inFlight = [...flights.values()];
      for (const f of inFlight) f.controller.abort(new DiagError("E_BUSY", "the server is closing"));
      await Promise.allSettled(inFlight.map((f) => f.promise));
    },
  };
}

/** A key for "the same call": the name and the input with keys sorted, run_id left out. */
export function callKey(name: string, input: Readonly<Record<string, unknown>>): string {
  const { run_id: _runId, ...rest } = input;
  return `${name}\u0000${stableJson(rest)}`;
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
