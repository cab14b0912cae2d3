/**
 * A server's tool-call slots (MAX_CALLS), shared fairly between callers (issue 18, F7). Alone, a caller may
 * take every slot, and the next call is E_BUSY as before. When the server is full and a caller asks who holds
 * at least two slots fewer than another caller, that other caller's newest call gives its slot up: it is
 * answered E_BUSY with Retry-After at once (its work is cancelled) and the slot goes to the caller who asked.
 * So with two callers each ends up with half the slots whatever the other one sends, and a caller alone still
 * gets all of them. Before, root holding 40 slow calls on network left uid 65534 E_BUSY 6 times of 6.
 *
 * A caller is the share key the routes give (http/caller-key.ts: a loopback uid, else an address, or the
 * client a gateway relays for); calls with no key (in-process callers: tests' inject, stdio) share one key.
 * Probes count under their scraper's key and give way like any call. Open streams (MAX_STREAMS) are shared by
 * the same rule: a preempted stream ends with an `error` event E_BUSY (http/routes/sse.ts).
 */
import { DiagError } from "../errors/errors.ts";
import { type BoundState, RETRY_AFTER_S, type Release } from "./limiter.ts";

/** The key of calls that name no caller. */
export const LOCAL_CALLER = "local";

export interface CallSlots extends BoundState {
  /**
   * A slot for `caller`, or E_BUSY. `onPreempt` makes the call preemptible: called (once) when its slot goes to
   * another caller; the slot is no longer this call's then (its release does nothing).
   */
  take(what: string, caller?: string, onPreempt?: () => void): Release;
  /** E_BUSY now if `caller` would not get a slot (the slot itself is taken later). */
  check(what: string, caller?: string): void;
  /** Slots held by a caller (tests, /metrics). */
  heldBy(caller: string): number;
}

interface Grant {
  caller: string;
  released: boolean;
  onPreempt: (() => void) | undefined;
}

/** What a preempted call is told: E_BUSY with Retry-After, as if it had come when the server was full. */
export function preemptedError(what: string, max: number, kind = "tool-call"): DiagError {
  return new DiagError(
    "E_BUSY",
    `${what}: gave its slot to another caller (this caller held more than its share of the ${max} ${kind} slots)`,
    { hint: `retry in ${RETRY_AFTER_S} s`, retryAfterS: RETRY_AFTER_S },
  );
}

/** `kind` names the slots in a refusal ("tool calls", "streams"). */
export function createCallSlots(max: number, onRefuse?: () => void, kind = "tool calls"): CallSlots {
  const grants = new Set<Grant>();
  const held = new Map<string, number>();
  const count = (caller: string) => held.get(caller) ?? 0;
  const add = (caller: string, n: number) => {
    const left = count(caller) + n;
    if (left > 0) held.set(caller, left);
    else held.delete(caller);
  };

  /** The newest preemptible call of the caller holding the most, if it holds at least two more than `caller`. */
  function victimFor(caller: string): Grant | undefined {
    let richest: string | undefined;
    for (const [other, n] of held) {
      if (other !== caller && n >= count(caller) + 2 && (richest === undefined || n > count(richest))) richest = other;
    }
    if (richest === undefined) return undefined;
    let newest: Grant | undefined;
    // A Set iterates in insertion order: the last match is the newest.
    for (const g of grants) if (g.caller === richest && g.onPreempt) newest = g;
    return newest;
  }

  function refuse(what: string): never {
    onRefuse?.();
    throw new DiagError("E_BUSY", `${what}: ${max} ${kind} already running here`, {
      hint: `retry in ${RETRY_AFTER_S} s`,
      retryAfterS: RETRY_AFTER_S,
    });
  }

  function free(g: Grant): void {
    g.released = true;
    grants.delete(g);
    add(g.caller, -1);
  }

  return {
    max,
    get active() {
      return grants.size;
    },
    // Tool calls are refused at the bound, never queued (subprocesses queue: limiter.ts).
    waiting: 0,
    heldBy: count,
    check(what, caller = LOCAL_CALLER) {
      if (grants.size >= max && !victimFor(caller)) refuse(what);
    },
    take(what, caller = LOCAL_CALLER, onPreempt) {
      if (grants.size >= max) {
        const victim = victimFor(caller);
        if (!victim) refuse(what);
        free(victim);
        victim.onPreempt?.();
      }
      const grant: Grant = { caller, released: false, onPreempt };
      grants.add(grant);
      add(caller, 1);
      return () => {
        if (!grant.released) free(grant);
      };
    },
  };
}

/**
 * What a holder does when its slot goes to another caller: `controller` is aborted with the reason, and `lost`
 * rejects with it (raced against the work, so the answer is E_BUSY whatever the work makes of the abort);
 * `release` stops listening once the work is done.
 */
export function onSlotLost(
  preempted: AbortSignal,
  controller: AbortController,
): { lost: Promise<never>; release: () => void } {
  let listener: (() => void) | undefined;
  const lost = new Promise<never>((_, reject) => {
    listener = () => {
      controller.abort(preempted.reason);
      reject(preempted.reason);
    };
    preempted.addEventListener("abort", listener, { once: true });
  });
  // Raced, or never looked at when the work ends first: not an unhandled rejection either way.
  lost.catch(() => {});
  return { lost, release: () => listener && preempted.removeEventListener("abort", listener) };
}
