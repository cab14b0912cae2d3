/**
 * One long-lived MCP `Server` per runtime, fed by many stateless HTTP requests at once. Each request's id is
 * swapped for a unique internal one on the way in and back on the way out, so concurrent clients that all
 * say `"id": 1` never meet; a client that hangs up cancels its call (notifications/cancelled). What the server
 * would send on its own (logging) has no channel in stateless HTTP and is dropped, as the SDK's JSON-response
 * mode does; tools/call never comes here (transports.ts answers it, as an SSE stream when it asks for progress).
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

type Id = string | number;

interface Pending {
  originalId: Id;
  resolve(message: JSONRPCMessage): void;
}

export class MuxTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #pending = new Map<string, Pending>();
  #next = 0;

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.#pending.clear();
    this.onclose?.();
  }

  /** Deliver a notification (or a client's response): nothing comes back. */
  notify(message: JSONRPCMessage): void {
    this.onmessage?.(message);
  }

  /** Deliver one request and wait for its response; `signal` aborting cancels it on the server. */
  request(message: JSONRPCMessage & { id: Id }, signal: AbortSignal): Promise<JSONRPCMessage | undefined> {
    this.#next += 1;
    const internal = `mux-${this.#next}`;
    return new Promise((resolve) => {
      const onAbort = () => {
        if (!this.#pending.delete(internal)) return;
        this.onmessage?.({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: internal, reason: "the HTTP client went away" },
        });
        resolve(undefined);
      };
      this.#pending.set(internal, {
        originalId: message.id,
        resolve: (response) => {
          signal.removeEventListener("abort", onAbort);
          resolve(response);
        },
      });
      signal.addEventListener("abort", onAbort, { once: true });
      this.onmessage?.({ ...message, id: internal });
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const id = (message as { id?: unknown }).id;
    if (typeof id !== "string" || !("result" in message || "error" in message)) return;
    const pending = this.#pending.get(id);
    if (!pending) return;
    this.#pending.delete(id);
    pending.resolve({ ...message, id: pending.originalId } as JSONRPCMessage);
  }
}
