/**
 * Every server inside the `roadnerd up` process (the laptop default): one bundle, so Fastify, zod, undici and
 * the MCP SDK are loaded once, while each server keeps its own runtime (config, logger, bounds, resources) and
 * its own port, as if it ran alone. A fault stays with its server: each request runs inside an async context
 * naming its server, so an exception no handler caught (a throw in a tool's timer or event callback, a
 * rejection nobody awaited) is charged to that server, which alone is closed and started again (restarts.ts).
 * Thrown errors inside a call are the kernel's E_INTERNAL as always; a hung call ends at its deadline; a bound
 * is each runtime's own.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { BaseConfig, ServerDef } from "@roadnerd/conventions";
import { type HostedHttp, hostHttp } from "@roadnerd/conventions/supervise";
import { Restarts } from "./restarts.ts";

/** A faulted server's close is cut after this long: its port must be free for the restart. */
const CLOSE_FAULTED_MS = 2_000;

export interface InProcessOptions {
  defs: ReadonlyMap<string, ServerDef<BaseConfig>>;
  /** A server's whole environment (its inherited and own settings, PORT included). */
  envFor: (server: string) => Record<string, string>;
  /** One line for the person running `up` (stderr). */
  say: (line: string) => void;
}

export class InProcessServers {
  readonly #als = new AsyncLocalStorage<string>();
  readonly #hosted = new Map<string, HostedHttp>();
  /** The port each server bound first: a restart takes the same one (PORT=0 included). */
  readonly #ports = new Map<string, number>();
  readonly #options: InProcessOptions;
  readonly restarts: Restarts;
  readonly #onFault = (err: unknown) => this.#fault(err);

  constructor(options: InProcessOptions) {
    this.#options = options;
    this.restarts = new Restarts((server) => this.#start(server), options.say);
    process.on("uncaughtException", this.#onFault);
    process.on("unhandledRejection", this.#onFault);
  }

  async #start(server: string): Promise<string> {
    const def = this.#options.defs.get(server);
    if (!def) throw new Error(`${server} is not a registered server`);
    const env = this.#options.envFor(server);
    const port = this.#ports.get(server);
    const hosted = await hostHttp(def, {
      env: port === undefined ? env : { ...env, PORT: String(port) },
      around: (run) => this.#als.run(server, run),
    });
    this.#hosted.set(server, hosted);
    this.#ports.set(server, hosted.port);
    return hosted.url;
  }

  /** An exception nothing caught: its server is restarted; one no server owns is logged and survived. */
  #fault(err: unknown): void {
    const server = this.#als.getStore();
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    const hosted = server === undefined ? undefined : this.#hosted.get(server);
    if (server === undefined || !hosted) {
      this.#options.say(`uncaught outside any server (kept running): ${message.slice(0, 300)}`);
      return;
    }
    hosted.runtime.log.error({ err }, "uncaught exception: this server restarts, the others go on");
    this.#hosted.delete(server);
    this.restarts.faulted(server, message);
    void this.#closeFaulted(hosted);
  }

  async #closeFaulted(hosted: HostedHttp): Promise<void> {
    const cut = new Promise((r) => setTimeout(r, CLOSE_FAULTED_MS).unref());
    await Promise.race([hosted.close().catch(() => {}), cut]);
  }

  /** Start each server once; a restart comes only after a fault of a server that did start. */
  start(servers: readonly string[]) {
    return this.restarts.startAll(servers);
  }

  pidOf(server: string): number | undefined {
    return this.#hosted.has(server) ? process.pid : undefined;
  }

  async close(): Promise<void> {
    this.restarts.close();
    await Promise.all([...this.#hosted.values()].map((h) => h.close().catch(() => {})));
    this.#hosted.clear();
    process.off("uncaughtException", this.#onFault);
    process.off("unhandledRejection", this.#onFault);
  }
}
