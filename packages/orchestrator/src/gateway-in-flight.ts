/**
 * SIGTERM at the HTTP gateway (`roadnerd mcp --http`, `roadnerd up`) answers every call in flight, as the
 * servers do (kernel http/in-flight.ts): a POST to /mcp or the page's /api gets its result if it comes within
 * the grace period, else 503 E_BUSY "shutting down" (a JSON-RPC error with its id on /mcp) before the
 * connections are cut. Before, `close()` cut them with no answer. An answer already under way (an SSE stream:
 * a tools/call with a progressToken, the page's triage and watch) ends with the same typed error as its last
 * event, and every call still running is cancelled towards its server (attacker F6).
 */
import { setMaxListeners } from "node:events";
import type { ServerResponse } from "node:http";
import { RPC, rpcError, SHUTDOWN_FLUSH_MS, SHUTDOWN_GRACE_MS, SHUTDOWN_MESSAGE } from "@roadnerd/conventions/internal";

interface Call {
  /** The JSON-RPC id on /mcp (null when the body had none); undefined for the page's API. */
  rpcId: string | number | null | undefined;
  done: Promise<void>;
}

export class GatewayInFlight {
  readonly #open = new Map<ServerResponse, Call>();
  readonly #graceOver = new AbortController();

  constructor() {
    // One listener per answer in flight, bounded by the gateway's connection cap, not by this signal.
    setMaxListeners(0, this.#graceOver.signal);
  }

  /**
   * Aborts when the grace period is over: streams under way end with E_BUSY, and every call in flight is
   * cancelled (a call's signal includes it), so the servers behind are not left running them.
   */
  get graceOver(): AbortSignal {
    return this.#graceOver.signal;
  }

  /** Follow a POST until its answer is written or its connection closes. */
  track(res: ServerResponse): void {
    const done = new Promise<void>((resolve) => res.once("close", () => resolve()));
    this.#open.set(res, { rpcId: undefined, done });
    void done.then(() => this.#open.delete(res));
  }

  /** The JSON-RPC id of a /mcp call, once its body is read: the shutdown answer carries it. */
  setRpcId(res: ServerResponse, rpcId: string | number | null): void {
    const call = this.#open.get(res);
    if (call) call.rpcId = rpcId;
  }

  /**
   * Wait up to the grace period, then answer whatever is left (a 503, or the last event of a stream already
   * under way) and cancel it; resolves once those answers are written, or after SHUTDOWN_FLUSH_MS.
   */
  async drain(graceMs = SHUTDOWN_GRACE_MS): Promise<void> {
    if (this.#open.size > 0) {
      const all = Promise.all([...this.#open.values()].map((c) => c.done));
      await Promise.race([all, new Promise((r) => setTimeout(r, graceMs).unref())]);
    }
    const left = [...this.#open.entries()];
    for (const [res, { rpcId }] of left.filter(([r]) => !r.headersSent)) {
      const body =
        rpcId === undefined
          ? { error: { code: "E_BUSY", message: SHUTDOWN_MESSAGE } }
          : rpcError(rpcId, RPC.InternalError, SHUTDOWN_MESSAGE, "E_BUSY");
      res.writeHead(503, { "content-type": "application/json", connection: "close", "retry-after": "1" });
      res.end(JSON.stringify(body));
    }
    // After the 503s are out, so a cancelled call's failure never races them to the reply.
    this.#graceOver.abort();
    // A moment for the answers to be written before the connections are cut.
    const written = Promise.all(left.map(([, c]) => c.done));
    await Promise.race([written, new Promise((r) => setTimeout(r, SHUTDOWN_FLUSH_MS).unref())]);
  }
}
