/** Typed calls to one server: healthz, the catalog, a tool, a stream. */
import { type Agent, type Dispatcher, request } from "undici";
import { RemoteError, remoteErrorFrom } from "./remote-error.ts";
import { type SseEvent, streamEvents } from "./sse.ts";
import { type ClientTls, tlsAgent, tlsErrorOf, withoutUserinfo } from "./tls.ts";

export interface ClientOptions {
  /** Bearer token when the server runs with AUTH_TOKEN. */
  token?: string;
  /** An https:// server with its own CA (TLS_CERT_FILE) or asking for client certificates (TLS_CLIENT_CA_FILE). */
  tls?: ClientTls;
  /** Wins over `tls`. */
  dispatcher?: Dispatcher;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Extra request headers (a gateway names the client it calls for: the kernel's RELAYED_CALLER_HEADER). */
  headers?: Record<string, string>;
}

export interface Health {
  ok: boolean;
  name: string;
  version: string;
  capabilities?: Record<string, unknown>;
}

export interface ActionEntry {
  tool: string;
  summary: string;
  input: Record<string, unknown>;
}

export class RoadNerdClient {
  readonly baseUrl: string;
  readonly #options: ClientOptions;
  /** The Agent made from `tls` (closed by close()). */
  readonly #own: Agent | undefined;

  /** Throws when a TLS file cannot be read. */
  constructor(baseUrl: string, options: ClientOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.#own = options.tls && !options.dispatcher ? tlsAgent(options.tls) : undefined;
    this.#options = this.#own ? { ...options, dispatcher: this.#own } : options;
  }

  /** Close the connections of the Agent this client made for its TLS files (a no-op otherwise). */
  async close(): Promise<void> {
    await this.#own?.close();
  }

  #headers(extra: Record<string, string> = {}): Record<string, string> {
    return this.#options.token ? { authorization: `Bearer ${this.#options.token}`, ...extra } : extra;
  }

  async #json<T>(method: "GET" | "POST", path: string, body?: unknown, options: CallOptions = {}): Promise<T> {
    const res = await request(`${this.baseUrl}${path}`, {
      method,
      headers: this.#headers({
        ...options.headers,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      }),
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: options.signal,
      dispatcher: this.#options.dispatcher,
    }).catch((err: unknown) => {
      throw tlsErrorOf(err, this.baseUrl, Boolean(this.#options.tls?.certFile)) ?? err;
    });
    const parsed = await boundedJson(res.body, this.baseUrl);
    if (res.statusCode !== 200) throw remoteErrorFrom(res.statusCode, parsed === NOT_JSON ? null : parsed);
    // A 200 that is not JSON is not a RoadNerd server's answer (a captive page, another service at that URL).
    if (parsed === NOT_JSON)
      throw new RemoteError("E_INTERNAL", "unexpected response (status 200, not JSON)", 502, undefined, true);
    return parsed as T;
  }

  healthz(options?: CallOptions): Promise<Health> {
    return this.#json("GET", "/healthz", undefined, options);
  }

  actions(options?: CallOptions): Promise<ActionEntry[]> {
    return this.#json("GET", "/actions", undefined, options);
  }

  /** POST /actions/<tool>. Resolves with the tool's result; rejects with RemoteError (match on `.code`). */
  async call<T = Record<string, unknown>>(
    tool: string,
    input: Record<string, unknown> = {},
    options?: CallOptions,
  ): Promise<T> {
    const result = await this.#json<unknown>("POST", `/actions/${encodeURIComponent(tool)}`, input, options);
    // A tool's result is always an object (its summary at least): `null`, a list or a number is something else.
    if (typeof result !== "object" || result === null || Array.isArray(result))
      throw new RemoteError("E_INTERNAL", "unexpected response (status 200, not an object)", 502, undefined, true);
    return result as T;
  }

  /** GET /sse/<name>?<query>: every event until `end`. */
  stream(
    name: string,
    query: Record<string, string | number | boolean> = {},
    options: CallOptions = {},
  ): AsyncGenerator<SseEvent> {
    const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
    return streamEvents(`${this.baseUrl}/sse/${encodeURIComponent(name)}${qs ? `?${qs}` : ""}`, {
      headers: this.#headers(options.headers),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(this.#options.dispatcher ? { dispatcher: this.#options.dispatcher } : {}),
    });
  }
}

/**
 * A server's answer is at most a few hundred KiB (the kernel caps tool output); a host that sends more (a fleet
 * host gone wrong, or hostile) is cut off here instead of growing the gateway by what it sends.
 */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/** What boundedJson gives for a body that does not parse (JSON itself can say null). */
const NOT_JSON: unique symbol = Symbol("not JSON");

async function boundedJson(body: AsyncIterable<Buffer> & { destroy(): unknown }, from: string): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) {
      body.destroy();
      throw new RemoteError(
        "E_INTERNAL",
        `unexpected response from ${withoutUserinfo(from)}: more than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB (cut off)`,
        502,
        undefined,
        true,
      );
    }
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
  } catch {
    return NOT_JSON;
  }
}

export function createClient(baseUrl: string, options?: ClientOptions): RoadNerdClient {
  return new RoadNerdClient(baseUrl, options);
}
