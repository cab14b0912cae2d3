/**
 * MCP over stdio as newline-delimited JSON, with the edges the SDK's transport leaves open: a line over the
 * size limit or one that is not JSON gets a JSON-RPC error and the session goes on; every message passes the
 * same guard as HTTP; a closed or full stdout ends the process quietly (exit 0), never with a stack. When stdin
 * ends (`printf '…' | roadnerd-x --stdio`), the requests already read are still answered before it closes.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { SHUTDOWN_FLUSH_MS, SHUTDOWN_MESSAGE } from "../http/in-flight.ts";
import { checkMessage } from "./guard.ts";
import { RPC, type RpcError, rpcError } from "./rpc.ts";

export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #input: NodeJS.ReadableStream;
  readonly #output: NodeJS.WritableStream;
  readonly #maxBytes: number;
  #chunks: Buffer[] = [];
  #size = 0;
  /** Skipping the rest of an oversized line. */
  #discarding = false;
  #closed = false;
  /** stdin has ended: close once every request read so far has its response. */
  #ending = false;
  /** Ids of requests read and not answered yet. */
  readonly #pending = new Set<string | number>();
  /** Ids answered by drain(): their late responses are dropped, so no id is answered twice. */
  readonly #cut = new Set<string | number>();
  /** drain() waiting for the last pending response. */
  #whenIdle?: () => void;

  constructor(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, maxBytes: number) {
    this.#input = input;
    this.#output = output;
    this.#maxBytes = maxBytes;
  }

  async start(): Promise<void> {
    this.#input.on("data", this.#onData);
    this.#input.on("end", this.#onEnd);
  }

  readonly #onData = (chunk: Buffer | string) => {
    let data = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    for (let nl = data.indexOf(10); nl >= 0; nl = data.indexOf(10)) {
      const head = data.subarray(0, nl);
      data = data.subarray(nl + 1);
      if (this.#discarding) {
        this.#discarding = false;
        continue;
      }
      if (this.#size + head.length > this.#maxBytes) {
        this.#tooLarge();
        continue;
      }
      this.#chunks.push(head);
      const line = Buffer.concat(this.#chunks).toString("utf8").trim();
      this.#chunks = [];
      this.#size = 0;
      if (line) this.#handle(line);
    }
    if (this.#discarding || data.length === 0) return;
    if (this.#size + data.length > this.#maxBytes) {
      this.#tooLarge();
      this.#discarding = true;
      return;
    }
    this.#chunks.push(data);
    this.#size += data.length;
  };

  readonly #onEnd = () => {
    this.#ending = true;
    if (this.#pending.size === 0) void this.close();
  };

  #tooLarge(): void {
    this.#chunks = [];
    this.#size = 0;
    this.#reply(rpcError(null, RPC.InvalidRequest, `message larger than ${this.#maxBytes} bytes`, "E_TOO_LARGE"));
  }

  #initialized = false;

  #handle(line: string): void {
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      this.#reply(rpcError(null, RPC.ParseError, "Parse error: not JSON", "E_INVALID_INPUT"));
      return;
    }
    const checked = checkMessage(raw);
    if (checked.ok) {
      const m = checked.message as { id?: string | number; method?: string };
      // A session starts with initialize (MCP lifecycle); a tool call before it is refused, not served.
      if (m.method === "initialize") this.#initialized = true;
      else if (!this.#initialized && m.id !== undefined && m.method !== undefined && m.method !== "ping") {
        this.#reply(
          rpcError(m.id, RPC.InvalidRequest, `${m.method} before initialize: send initialize first`, "E_INVALID_INPUT"),
        );
        return;
      }
      if (m.method !== undefined && m.id !== undefined) this.#pending.add(m.id);
      this.onmessage?.(checked.message);
    } else if (checked.response) this.#reply(checked.response);
  }

  #reply(error: RpcError): void {
    void this.send(error as unknown as JSONRPCMessage);
  }

  /**
   * A signal to stop (SIGTERM): read nothing more; each request in flight gets its response if it comes within
   * `graceMs`, else a JSON-RPC error carrying E_BUSY ("server shutting down"), as HTTP answers its calls, and its
   * handler is cancelled (its tool and any process it runs stop). Resolves once those answers are written, or
   * after SHUTDOWN_FLUSH_MS when the client does not read them (a full pipe): the caller then exits, dropping
   * what it could not deliver, instead of waiting on the client forever.
   */
  async drain(graceMs: number): Promise<void> {
    this.#input.off("data", this.#onData);
    this.#input.off("end", this.#onEnd);
    if (this.#pending.size > 0) {
      await new Promise<void>((resolve) => {
        this.#whenIdle = resolve;
        setTimeout(resolve, graceMs).unref();
      });
    }
    const left = [...this.#pending];
    this.#pending.clear();
    for (const id of left) this.#cut.add(id);
    for (const id of left) {
      this.onmessage?.({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: id, reason: "shutdown" },
      });
    }
    const written = Promise.all(
      left.map((id) =>
        this.#write(rpcError(id, RPC.InternalError, SHUTDOWN_MESSAGE, "E_BUSY") as unknown as JSONRPCMessage),
      ),
    );
    await Promise.race([written, new Promise((r) => setTimeout(r, SHUTDOWN_FLUSH_MS).unref())]);
  }

  #write(message: JSONRPCMessage): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.#output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.#output.once("drain", () => resolve());
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const m = message as { id?: string | number; method?: string };
    if (m.method === undefined && m.id !== undefined && this.#cut.has(m.id)) return Promise.resolve();
    const written = this.#write(message);
    if (m.method === undefined && m.id !== undefined && this.#pending.delete(m.id)) {
      if (this.#pending.size === 0) this.#whenIdle?.();
      if (this.#ending && this.#pending.size === 0) void written.then(() => this.close());
    }
    return written;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#input.off("data", this.#onData);
    this.#input.off("end", this.#onEnd);
    this.onclose?.();
  }
}
