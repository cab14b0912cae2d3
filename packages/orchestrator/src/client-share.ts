/**
 * A fair share of the servers' slots per gateway client. A server runs at most MAX_CALLS tools at once (16 by
 * default) and the gateway calls every server as itself, so without a share one client's 120 concurrent calls
 * took all 16 of network's slots and every other client got E_BUSY (issue 18). Each client may hold at most
 * `cap` tool calls in flight at the gateway (default 8, half a server's slots); the excess is refused at once
 * with 503 E_BUSY and Retry-After, before any server is asked.
 *
 * Who a client is: the kernel's callerKey (on loopback the uid that owns its socket, elsewhere its address),
 * the key the servers' own fair share uses too; the gateway names it to the servers it calls for the client.
 * Clients of one uid share one share.
 */
import { DEFAULT_CLIENT_CALLS } from "./config.ts";

export class ClientShare {
  readonly cap: number;
  readonly #held = new Map<string, number>();

  constructor(cap = DEFAULT_CLIENT_CALLS) {
    this.cap = cap;
  }

  /** A slot for this client, released by the returned function (once); undefined when its share is used up. */
  take(key: string): (() => void) | undefined {
    const held = this.#held.get(key) ?? 0;
    if (held >= this.cap) return undefined;
    this.#held.set(key, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#held.get(key) ?? 1) - 1;
      if (left > 0) this.#held.set(key, left);
      else this.#held.delete(key);
    };
  }

  /** Calls in flight for a client (for tests and /healthz). */
  held(key: string): number {
    return this.#held.get(key) ?? 0;
  }
}
