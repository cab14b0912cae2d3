/**
 * SIGTERM at the HTTP gateway (`roadnerd mcp --http`, `roadnerd up`) answers every call in flight, as the
 * servers do (kernel http/in-flight.ts): a POST to /mcp or the page's /api gets its result if it comes within
 * the grace period, else 503 E_BUSY "shutting down" (a JSON-RPC error with its id on /mcp) before the
 * connections are cut. Before, `close()` cut them with no answer.
 */
import type { ServerResponse } from "node:http";
import { RPC, rpcError, SHUTDOWN_GRACE_MS, SHUTDOWN_MESSAGE } from "@roadnerd/conventions/internal";

interface Call {
  /** The JSON-RPC id on /mcp (null when the body had none); undefined for the page's API. */
  rpcId: string | number | null | undefined;
  done: Promise<void>;
}

export class GatewayInFlight {
  readonly #open = new Map<ServerResponse, Call>();

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

  /** Wait up to the grace period, then answer whatever is left; resolves once those answers are written. */
  async drain(graceMs = SHUTDOWN_GRACE_MS): Promise<void> {
    if (this.#open.size === 0) return;
    const all = Promise.all([...this.#open.values()].map((c) => c.done));
    await Promise.race([all, new Promise((r) => setTimeout(r, graceMs).unref())]);
    const left = [...this.#open.entries()].filter(([res]) => !res.headersSent);
    for (const [res, { rpcId }] of left) {
      const body =
        rpcId === undefined
          ? { error: { code: "E_BUSY", message: SHUTDOWN_MESSAGE } }
          : rpcError(rpcId, RPC.InternalError, SHUTDOWN_MESSAGE, "E_BUSY");
      res.writeHead(503, { "content-type": "application/json", connection: "close", "retry-after": "1" });
      res.end(JSON.stringify(body));
    }
    // A moment for the answers to be written before the connections are cut.
    const written = Promise.all(left.map(([res]) => new Promise((r) => res.once("finish", r))));
    await Promise.race([written, new Promise((r) => setTimeout(r, 500).unref())]);
  }
}
