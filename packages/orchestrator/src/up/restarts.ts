/**
 * `up` supervises its servers: a server that faulted (in-process) or exited (its own process) is started again
 * after a backoff that doubles from RESTART_FIRST_MS to RESTART_MAX_MS, back to the first once it has stayed up
 * for STABLE_MS. Each server's state is what the gateway's /healthz shows.
 */
export const RESTART_FIRST_MS = 250;
export const RESTART_MAX_MS = 30_000;
export const STABLE_MS = 60_000;

export type ServerState = "starting" | "up" | "restarting" | "failed";

export interface ServerStatus {
  state: ServerState;
  url?: string;
  restarts: number;
  /** The last fault or exit, one line. */
  last_fault?: string;
  /** When restarting: the wait before the next start. */
  retry_in_ms?: number;
}

export type StartOutcome = { url: string } | { reason: string };

interface Entry extends ServerStatus {
  failures: number;
  upSince?: number;
  timer?: NodeJS.Timeout;
}

export class Restarts {
  readonly #entries = new Map<string, Entry>();
  #closed = false;

  constructor(
    private readonly start: (server: string) => Promise<string>,
    private readonly say: (line: string) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The first start of each server: its URL or why it failed (no retry: a bad setting will not heal). */
  async startAll(servers: readonly string[]): Promise<Map<string, StartOutcome>> {
    const results = await Promise.allSettled(servers.map((s) => this.#startOnce(s)));
    return new Map(
      servers.map((s, i): [string, StartOutcome] => {
        const r = results[i];
        if (r?.status === "fulfilled") return [s, { url: r.value }];
        return [s, { reason: r?.reason instanceof Error ? r.reason.message : String(r?.reason) }];
      }),
    );
  }

  async #startOnce(server: string): Promise<string> {
    const e: Entry = this.#entries.get(server) ?? { state: "starting", restarts: 0, failures: 0 };
    this.#entries.set(server, e);
    try {
      const url = await this.start(server);
      Object.assign(e, { state: "up", url, upSince: this.now(), retry_in_ms: undefined });
      return url;
    } catch (err) {
      e.state = "failed";
      e.last_fault = err instanceof Error ? err.message : String(err);
      throw err;
    }
  }

  /** A running server faulted or exited: start it again after its backoff. */
  faulted(server: string, why: string): void {
    const e = this.#entries.get(server);
    // A server that never started stays failed (a bad setting will not heal); one restarting is already handled.
    if (!e || this.#closed || e.state === "restarting" || e.state === "failed") return;
    if (e.upSince !== undefined && this.now() - e.upSince >= STABLE_MS) e.failures = 0;
    const wait = Math.min(RESTART_MAX_MS, RESTART_FIRST_MS * 2 ** e.failures);
    e.failures += 1;
    Object.assign(e, { state: "restarting", last_fault: why.slice(0, 300), retry_in_ms: wait, upSince: undefined });
    this.say(`${server} faulted (${why.slice(0, 200)}); restarting in ${wait} ms`);
    e.timer = setTimeout(() => void this.#restart(server, e), wait);
  }

  async #restart(server: string, e: Entry): Promise<void> {
    e.timer = undefined;
    if (this.#closed) return;
    try {
      const url = await this.start(server);
      e.restarts += 1;
      Object.assign(e, { state: "up", url, upSince: this.now(), retry_in_ms: undefined });
      this.say(`${server} restarted (${e.restarts} so far) at ${url}`);
    } catch (err) {
      e.state = "up"; // faulted() does nothing while restarting
      this.faulted(server, `restart failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  status(): Record<string, ServerStatus> {
    return Object.fromEntries(
      [...this.#entries].map(([name, { state, url, restarts, last_fault, retry_in_ms }]) => [
        name,
        {
          state,
          restarts,
          ...(url ? { url } : {}),
          ...(last_fault ? { last_fault } : {}),
          ...(retry_in_ms ? { retry_in_ms } : {}),
        },
      ]),
    );
  }

  close(): void {
    this.#closed = true;
    for (const e of this.#entries.values()) if (e.timer) clearTimeout(e.timer);
  }
}
