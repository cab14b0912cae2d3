/**
 * Attach on request: nothing runs at start. The first call to a server's tool spawns its built bin (node
 * servers/<name>/dist/main.js, PORT=0 on 127.0.0.1) through the kernel's supervisor, waits for /healthz,
 * reuses it afterwards, detaches it after an idle time, and restarts it once if it died. A server already
 * running elsewhere (a configured URL) is used instead. Failures are AttachError (code E_ATTACH).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createClient, RemoteError, type RoadNerdClient } from "@roadnerd/client";
import { DEFAULT_TIMEOUT_MS, maskText } from "@roadnerd/conventions";
import { RELAYED_CALLER_HEADER } from "@roadnerd/conventions/internal";
import { exitText, type Supervised, SuperviseError, superviseListening } from "@roadnerd/conventions/supervise";
import { REPO_ROOT, type RegisteredServer } from "@roadnerd/registry";
import { DEFAULT_ATTACH_TIMEOUT_MS, DEFAULT_IDLE_MS } from "./config.ts";
import { AttachError, CallError, type ErrorInfo, errorInfo, fieldOf } from "./errors.ts";
import { type Fleet, LOCAL_HOST, type RemoteServer } from "./hosts.ts";
import { callWithProgress, type ProgressRelay } from "./relay-progress.ts";
import { remoteFailure } from "./remote-failure.ts";

/** What checking a result needs of a zod schema. */
export interface ResultSchema {
  safeParse(value: unknown): { success: boolean };
}

export interface Launch {
  argv: string[];
  env: Record<string, string>;
}

export interface AttacherOptions {
  /** The registry's servers (the attach layer only starts these). */
  servers: readonly RegisteredServer[];
  /** This machine's servers already running elsewhere: used as they are, never spawned. */
  remote?: ReadonlyMap<string, RemoteServer>;
  /** Other machines (ROADNERD_HOSTS): their servers are used as they are, like `remote`, never spawned. */
  hosts?: Fleet;
  idleMs?: number;
  attachTimeoutMs?: number;
  /** How to start a server (injectable: tests point it at a bin that never listens). */
  launch?: (server: RegisteredServer) => Launch;
  /** Extra env for a spawned server (its own config variables, passed through). */
  envFor?: (server: string) => Record<string, string>;
  /**
   * A tool's result schema (the catalog's): an answer that does not parse against it is not a RoadNerd server's
   * (E_ATTACH "unexpected response"), never relayed as the tool's success.
   */
  resultSchema?: (server: string, tool: string) => ResultSchema | undefined;
  /** attached / detached / restarted / exited, for progress output. */
  onEvent?: (event: AttachEvent) => void;
}

/** A host's server, as health() found it. */
export interface HostServerHealth {
  ok: boolean;
  version?: string;
  error?: ErrorInfo;
}

export interface AttachEvent {
  server: string;
  kind: "attached" | "detached" | "exited" | "restarted";
  url?: string;
  pid?: number;
  ms?: number;
  /** How an `exited` server ended: its signal (SIGKILL…) or `code N`. */
  how?: string;
}

export interface Attached {
  client: RoadNerdClient;
  /** True when this request attached it (spawned, or first contact with a remote URL). */
  attached: boolean;
  /** True when it had died and was started again. */
  restarted: boolean;
  attachMs: number;
}

interface Entry {
  client?: RoadNerdClient;
  child?: Supervised;
  pending?: Promise<Attached>;
  remoteChecked?: boolean;
  busy: number;
  idle?: NodeJS.Timeout;
  /** It ran before and died (not stopped by us). */
  died: boolean;
  stopping: boolean;
}

/** Errors that mean the server process went away under the call (not a diagnosis). */
const CONNECTION_ERRORS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/**
 * How long past the caller's own timeout_ms a server gets to answer: its deadline, serialising the answer, the
 * loopback round trip. A stopped server (SIGSTOP, a hung event loop) fails the call then, not minutes later.
 */
export const ANSWER_MARGIN_MS = 1_500;

/** The deadline towards a server for a call that asked for `timeout_ms` (the tools' default when absent). */
export function callDeadlineMs(params: Record<string, unknown>): number {
  const asked = typeof params.timeout_ms === "number" && params.timeout_ms > 0 ? params.timeout_ms : DEFAULT_TIMEOUT_MS;
  return asked + ANSWER_MARGIN_MS;
}

/**
 * The server's call, bounded by its deadline; plumbing failures typed (E_TIMEOUT, E_ATTACH), never E_INTERNAL.
 * With a relay, over the tool's stream (its progress handed on), with the same deadline and failures.
 */
async function boundedCall(
  server: string,
  client: RoadNerdClient,
  tool: string,
  params: Record<string, unknown>,
  signal: AbortSignal | undefined,
  relay: ProgressRelay | undefined,
  caller: string | undefined,
  schema: ResultSchema | undefined,
): Promise<Record<string, unknown>> {
  const deadlineMs = callDeadlineMs(params);
  const deadline = AbortSignal.timeout(deadlineMs);
  const bounded = signal ? AbortSignal.any([signal, deadline]) : deadline;
  // The server's fair share counts the client we call for, not us (the kernel's caller-key.ts).
  const headers = caller === undefined ? undefined : { [RELAYED_CALLER_HEADER]: caller };
  const options = { signal: bounded, ...(headers ? { headers } : {}) };
  try {
    const result = relay
      ? await callWithProgress(client, tool, relay, options)
      : await client.call(tool, params, options);
    // `{}` where the tool answers {summary, …}: something else answers at that URL, not a success to relay.
    if (schema && !schema.safeParse(result).success)
      throw new RemoteError("E_INTERNAL", `unexpected response (not ${tool}'s result)`, 502, undefined, true);
    return result;
  } catch (err) {
    if (deadline.aborted && !signal?.aborted) {
      throw new CallError("E_TIMEOUT", `${server} did not answer ${tool} within ${deadlineMs} ms`, {
        hint: "the server may be stopped or overloaded",
      });
    }
    if (fieldOf(err, "code") === "E_TLS") {
      throw new CallError("E_ATTACH", `${server}: TLS failed under ${tool}: ${errorInfo(err).message}`, { cause: err });
    }
    const codes = [fieldOf(err, "code"), fieldOf(fieldOf(err, "cause"), "code")];
    const failure = codes.find((c) => typeof c === "string" && CONNECTION_ERRORS.has(c));
    if (typeof failure === "string") {
      throw new CallError("E_ATTACH", `${server}: connection failed under ${tool} (${failure})`, { cause: err });
    }
    // What answered was not the server (a redirect, a proxy's page, past the size cap, not HTTP at all): not a
    // bug of ours. A server's own error body (a RemoteError with its code) is not a failure to reach it.
    const ownError = fieldOf(err, "status") !== undefined && fieldOf(err, "unexpected") !== true;
    const foreign = ownError ? undefined : remoteFailure(server, shownUrl(client.baseUrl), err);
    if (foreign?.code === "E_ATTACH")
      throw new CallError("E_ATTACH", foreign.message, { hint: foreign.hint, cause: err });
    throw err;
  }
}

/** A refused remote server may be restarting (`roadnerd up` restarts its servers): asked again for this long. */
export const REMOTE_REFUSED_GRACE_MS = 1_000;

/**
 * A remote server that cannot be reached stops the attach now: no route, no name, not HTTP, a cut connection
 * will not change within an attach timeout (50 tries of a refused port took 5.7 s), a refusal only after
 * REMOTE_REFUSED_GRACE_MS. A timeout has already taken its time.
 */
function giveUp(code: string, elapsedMs: number): boolean {
  return code !== "E_CONN_REFUSED" || elapsedMs >= REMOTE_REFUSED_GRACE_MS;
}

const TLS_HINT =
  "the host's `ca` in ROADNERD_HOSTS must be the CA that signed its servers' certificates, and `cert`/`key` a " +
  "client certificate their TLS_CLIENT_CA_FILE signed";

/** A URL as messages, hints, events and the hosts tool show it: never its userinfo (a credential). */
export const shownUrl = (url: string) => maskText(url);

/** How a server is named in errors and events: `network`, or `network@a` on another host. */
export const labelOf = (server: string, host: string | undefined) =>
  host === undefined || host === LOCAL_HOST ? server : `${server}@${host}`;

export function defaultLaunch(server: RegisteredServer): Launch {
  return {
    argv: [process.execPath, join(REPO_ROOT, server.entry)],
    env: { HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "warn" },
  };
}

export class Attacher {
  readonly #options: AttacherOptions;
  readonly #entries = new Map<string, Entry>();
  #closed = false;

  constructor(options: AttacherOptions) {
    this.#options = options;
  }

  /** Entries of this machine's servers are keyed by name, another host's by `server@host`. */
  #entry(server: string, host?: string): Entry {
    const key = labelOf(server, host);
    let e = this.#entries.get(key);
    if (!e) {
      e = { busy: 0, died: false, stopping: false };
      this.#entries.set(key, e);
    }
    return e;
  }

  /** The other machines' names (ROADNERD_HOSTS), in the file's order. */
  hostNames(): string[] {
    return [...(this.#options.hosts?.keys() ?? [])];
  }

  /** A host's servers and how they are reached (undefined for an unknown host; `local` is not in the fleet). */
  hostServers(host: string): ReadonlyMap<string, RemoteServer> | undefined {
    return this.#options.hosts?.get(host);
  }

  /** Where `server` of `host` runs: this machine's own (spawned or configured) or another host's. */
  #remoteOf(server: string, host: string | undefined): RemoteServer | undefined {
    if (host === undefined || host === LOCAL_HOST) return this.#options.remote?.get(server);
    const servers = this.#options.hosts?.get(host);
    if (!servers) {
      const known = [LOCAL_HOST, ...this.hostNames()].join(", ");
      throw new AttachError(labelOf(server, host), "remote", `no host ${host} (hosts: ${known})`);
    }
    const remote = servers.get(server);
    if (!remote) {
      const has = [...servers.keys()].join(", ");
      throw new AttachError(labelOf(server, host), "remote", `host ${host} lists no ${server} server (it has: ${has})`);
    }
    return remote;
  }

  /** Is a spawned child alive right now (false for remote servers and never-attached ones)? */
  isRunning(server: string): boolean {
    return this.#entries.get(server)?.child?.alive() ?? false;
  }

  /** Is it reached at a URL (configured, or run by `roadnerd up`) rather than spawned on demand? */
  isRemote(server: string): boolean {
    return this.#options.remote?.has(server) ?? false;
  }

  pidOf(server: string): number | undefined {
    const child = this.#entries.get(server)?.child;
    return child?.alive() ? child.pid : undefined;
  }

  /**
   * The server's client, attaching it first if needed. `host`: another machine of ROADNERD_HOSTS, whose
   * servers are only ever reached at their URLs (default: this machine, where attach-on-request applies).
   */
  async ensure(server: string, host?: string): Promise<Attached> {
    if (this.#closed) throw new AttachError(server, "spawn", "the orchestrator is shutting down");
    const remote = this.#remoteOf(server, host);
    const e = this.#entry(server, host);
    if (e.pending) return e.pending;
    if (remote) {
      if (e.client && e.remoteChecked) return { client: e.client, attached: false, restarted: false, attachMs: 0 };
      e.pending = this.#checkRemote(labelOf(server, host), server, remote, e).finally(() => {
        e.pending = undefined;
      });
      return e.pending;
    }
    if (e.child?.alive() && e.client) return { client: e.client, attached: false, restarted: false, attachMs: 0 };
    const restarted = e.died;
    e.pending = this.#spawn(server, e, restarted).finally(() => {
      e.pending = undefined;
    });
    return e.pending;
  }

  /** A remote server's one client (its TLS Agent is made once and kept), made on first need. */
  #remoteClient(label: string, remote: RemoteServer, e: Entry): RoadNerdClient {
    if (e.client) return e.client;
    try {
      e.client = createClient(remote.url, {
        ...(remote.token ? { token: remote.token } : {}),
        ...(remote.tls ? { tls: remote.tls } : {}),
      });
    } catch (err) {
      throw new AttachError(label, "remote", errorInfo(err).message);
    }
    return e.client;
  }

  async #checkRemote(label: string, server: string, remote: RemoteServer, e: Entry): Promise<Attached> {
    const started = performance.now();
    const client = this.#remoteClient(label, remote, e);
    await this.#waitHealthy(server, client, "remote", undefined, label);
    e.remoteChecked = true;
    const ms = Math.round(performance.now() - started);
    this.#options.onEvent?.({ server: label, kind: "attached", url: shownUrl(remote.url), ms });
    return { client, attached: true, restarted: false, attachMs: ms };
  }

  async #spawn(server: string, e: Entry, restarted: boolean): Promise<Attached> {
    const def = this.#options.servers.find((s) => s.name === server);
    if (!def) throw new AttachError(server, "spawn", "not a registered server");
    const started = performance.now();
    const timeoutMs = this.#options.attachTimeoutMs ?? DEFAULT_ATTACH_TIMEOUT_MS;
    const launch = (this.#options.launch ?? defaultLaunch)(def);
    // An unbuilt checkout (`pnpm start network` builds only what it runs): say the fix, not Node's stack.
    const script = launch.argv[1];
    if (script?.endsWith(".js") && !existsSync(script))
      throw new AttachError(server, "spawn", `${script} is missing: run \`pnpm build\` first`);
    let child: Supervised;
    try {
      child = await superviseListening(launch.argv, {
        env: { ...(this.#options.envFor?.(server) ?? {}), ...launch.env },
        listenTimeoutMs: timeoutMs,
        onExit: (exit) => {
          // Exited before it listened (superviseListening rejects with the reason), or an older child.
          if (child === undefined || e.child !== child) return;
          this.#clearIdle(e);
          if (!e.stopping) {
            e.died = true;
            this.#options.onEvent?.({ server, kind: "exited", pid: child.pid, how: exitText(exit) });
          }
        },
      });
    } catch (err) {
      const phase = err instanceof SuperviseError && err.phase === "spawn" ? "spawn" : "listen";
      throw new AttachError(server, phase, errorInfo(err).message);
    }
    e.child = child;
    e.stopping = false;
    const client = createClient(child.url);
    try {
      await this.#waitHealthy(server, client, "health", timeoutMs - (performance.now() - started));
    } catch (err) {
      e.stopping = true;
      await child.stop(500);
      throw err;
    }
    e.client = client;
    e.died = false;
    const ms = Math.round(performance.now() - started);
    this.#options.onEvent?.({ server, kind: restarted ? "restarted" : "attached", url: child.url, pid: child.pid, ms });
    this.#armIdle(server, e);
    return { client, attached: true, restarted, attachMs: ms };
  }

  /** /healthz must say ok with this server's name; retried briefly (a server may answer 503 while starting). */
  async #waitHealthy(
    server: string,
    client: RoadNerdClient,
    phase: "health" | "remote",
    budgetMs = this.#options.attachTimeoutMs ?? DEFAULT_ATTACH_TIMEOUT_MS,
    label = server,
  ): Promise<void> {
    const started = performance.now();
    const deadline = started + Math.max(200, budgetMs);
    const url = shownUrl(client.baseUrl);
    let last = "no answer";
    for (let attempt = 0; attempt < 50 && performance.now() < deadline; attempt += 1) {
      try {
        const h = await client.healthz({
          signal: AbortSignal.timeout(Math.max(100, Math.round(deadline - performance.now()))),
        });
        if (h.ok && (h.name === server || h.name === `roadnerd-${server}`)) return;
        last = `healthz answered ${JSON.stringify(h).slice(0, 120)}`;
        if (h.ok) break; // Another server at that address: waiting will not help.
      } catch (err) {
        // A certificate the CA file does not vouch for, or a client certificate refused: retrying will not help.
        if (fieldOf(err, "code") === "E_TLS") throw new AttachError(label, "tls", errorInfo(err).message, TLS_HINT);
        const failure = phase === "remote" ? remoteFailure(label, url, err) : undefined;
        last = failure?.message ?? errorInfo(err).message;
        if (failure && giveUp(failure.code, performance.now() - started)) break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new AttachError(label, phase, `${url}/healthz: ${last}`);
  }

  /**
   * One look at another host's server, now: its /healthz within the signal, no retry (a listing of the fleet
   * must not wait out an attach timeout per host that is down). Failures are the error a call would get.
   */
  async health(server: string, host: string, signal: AbortSignal): Promise<HostServerHealth> {
    const label = labelOf(server, host);
    try {
      const remote = this.#remoteOf(server, host);
      if (!remote) throw new AttachError(label, "remote", "not reached at a URL");
      const h = await this.#remoteClient(label, remote, this.#entry(server, host)).healthz({ signal });
      if (h.ok && (h.name === server || h.name === `roadnerd-${server}`)) return { ok: true, version: h.version };
      const as = typeof h.name === "string" ? `as ${h.name.slice(0, 60)}` : "without a server's name";
      const message = `${label}: ${shownUrl(remote.url)}/healthz answered ${as}`;
      return { ok: false, error: { code: "E_ATTACH", message } };
    } catch (err) {
      const url = shownUrl(this.#remoteOf(server, host)?.url ?? "");
      if (signal.aborted)
        return { ok: false, error: { code: "E_TIMEOUT", message: `${label}: ${url}/healthz did not answer in time` } };
      if (fieldOf(err, "code") === "E_TLS") {
        return { ok: false, error: errorInfo(new AttachError(label, "tls", errorInfo(err).message, TLS_HINT)) };
      }
      // Whatever else failed on the way to it (not a RoadNerd error body) is a failure to reach it, never E_INTERNAL.
      const info = remoteFailure(label, url, err) ?? errorInfo(err);
      const typed =
        info.code === "E_INTERNAL" ? { code: "E_ATTACH", message: `${label}: ${url}: ${info.message}` } : info;
      return { ok: false, error: typed };
    }
  }

  /**
   * Call a tool, attaching (or once restarting) its server as needed; `host` as for ensure(). With `relay`
   * (a caller that asked for progress), over the tool's stream: its progress reports go to the relay. `caller`:
   * the client the call is made for (the gateway's share key), named to this machine's servers only.
   */
  async call(
    server: string,
    tool: string,
    params: Record<string, unknown>,
    options: { signal?: AbortSignal; host?: string; relay?: ProgressRelay; caller?: string } = {},
  ): Promise<{ result: Record<string, unknown>; attached: boolean; restarted: boolean; attachMs: number }> {
    let a = await this.ensure(server, options.host);
    const caller = options.host === undefined || options.host === LOCAL_HOST ? options.caller : undefined;
    const e = this.#entry(server, options.host);
    e.busy += 1;
    this.#clearIdle(e);
    const schema = this.#options.resultSchema?.(server, tool);
    try {
      try {
        const result = await boundedCall(
          labelOf(server, options.host),
          a.client,
          tool,
          params,
          options.signal,
          options.relay,
          caller,
          schema,
        );
        return { result, attached: a.attached, restarted: a.restarted, attachMs: a.attachMs };
      } catch (err) {
        if (!(await this.#diedUnder(e, err))) throw err;
        // It died under the call: start it again once and retry once.
        const again = await this.ensure(server);
        a = { ...again, attached: true, restarted: true, attachMs: a.attachMs + again.attachMs };
        const result = await boundedCall(server, a.client, tool, params, options.signal, options.relay, caller, schema);
        return { result, attached: true, restarted: true, attachMs: a.attachMs };
      }
    } finally {
      e.busy -= 1;
      this.#armIdle(server, e);
    }
  }

  async #diedUnder(e: Entry, err: unknown): Promise<boolean> {
    const cause = fieldOf(err, "cause");
    const codes = [fieldOf(err, "code"), fieldOf(cause, "code"), fieldOf(fieldOf(cause, "cause"), "code")];
    if (!e.child || !codes.some((c) => typeof c === "string" && CONNECTION_ERRORS.has(c))) return false;
    // The socket error can arrive before the exit event: give the exit a moment to land.
    await Promise.race([e.child.exited, new Promise((r) => setTimeout(r, 1000).unref())]);
    return !e.child.alive();
  }

  #clearIdle(e: Entry): void {
    if (e.idle) clearTimeout(e.idle);
    e.idle = undefined;
  }

  #armIdle(server: string, e: Entry): void {
    this.#clearIdle(e);
    if (!e.child?.alive() || e.busy > 0) return;
    e.idle = setTimeout(() => void this.detach(server), this.#options.idleMs ?? DEFAULT_IDLE_MS);
    e.idle.unref();
  }

  /** Stop a spawned server (idle time, or shutdown). Remote servers are left alone. */
  async detach(server: string): Promise<void> {
    const e = this.#entries.get(server);
    if (!e?.child?.alive()) return;
    this.#clearIdle(e);
    e.stopping = true;
    const pid = e.child.pid;
    await e.child.stop();
    e.client = undefined;
    this.#options.onEvent?.({ server, kind: "detached", pid });
  }

  /** Detach everything; later ensure() calls fail. Remote servers' connections close. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#entries.keys()].map((s) => this.detach(s)));
    await Promise.all([...this.#entries.values()].map((e) => (e.child ? undefined : e.client?.close())));
  }
}
