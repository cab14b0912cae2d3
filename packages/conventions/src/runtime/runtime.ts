/**
 * A server's runtime, built once per process (or per test app): its typed config, logger, outbound policy,
 * one exec per tool or stream that runs only the commands it declared, and the bounds every surface shares
 * (concurrent calls, open streams, subprocesses), single-flight calls, the stream hub and the resources its
 * tools made (resources.ts), closed with it. Every surface (HTTP, SSE, MCP over HTTP or stdio) calls tools
 * through it.
 */
import { setMaxListeners } from "node:events";
import type { BaseConfig } from "../define/config.ts";
import type { ServerDef } from "../define/server-def.ts";
import type { AnyStream } from "../define/stream.ts";
import type { AnyTool } from "../define/tool.ts";
import { createExec, type Exec } from "../exec/exec.ts";
import { createMetrics, type Metrics } from "../metrics/metrics.ts";
import { createOutboundPolicy, type OutboundPolicy } from "../outbound/index.ts";
import { type CallSlots, createCallSlots } from "./call-slots.ts";
import { createLimiter, type Limiter } from "./limiter.ts";
import { createLogger, type Logger } from "./logger.ts";
import { createResourceScope, type Resource } from "./resources.ts";
import { createSharedCalls, type SharedCalls } from "./shared-calls.ts";
import { createStreamHub, type StreamHub } from "./stream-hub.ts";

export interface Runtime<C = BaseConfig> {
  readonly def: ServerDef<C>;
  readonly config: C & BaseConfig;
  readonly log: Logger;
  readonly outbound: OutboundPolicy;
  /** Tool executions running at once (MAX_CALLS), shared fairly between callers; joined and cached calls take no slot. */
  readonly calls: CallSlots;
  /** Open streams (MAX_STREAMS), shared between callers by the same rule as the call slots. */
  readonly streams: CallSlots;
  /** Subprocesses running at once (MAX_PROCS); the rest wait within their deadline. */
  readonly procs: Limiter;
  readonly shared: SharedCalls;
  /** Prometheus series of this runtime (GET /metrics). */
  readonly metrics: Metrics;
  readonly hub: StreamHub;
  /** Aborts when the server is shutting down: open streams end with `end` before the connections close. */
  readonly closing: AbortSignal;
  /** A tool by its name or its catalog id `<server>/<tool>`. */
  tool(name: string): AnyTool | undefined;
  stream(name: string): AnyStream | undefined;
  /** The exec that runs exactly the commands `owner` declared. */
  execFor(owner: AnyTool | AnyStream): Exec;
  /** This runtime's instance of a resource, made on first use (E_BUSY once closing). */
  use<T>(resource: Resource<T, C>): T;
  /**
   * Aborts when the runtime closes, after the grace period and the shutdown answers (HTTP: the app's onClose):
   * every call still running is cancelled, so its outbound work (a probe, a connect, a process) does not hold
   * the process up to the call's own deadline.
   */
  readonly closed: AbortSignal;
  /** Start shutting down: every open stream is told to end. */
  shutdown(): void;
  /** Shut down and close every resource made, latest first (HTTP: when the app closes). */
  close(): Promise<void>;
}

export interface RuntimeOptions {
  /** Default: process.env. */
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  /** Log file descriptor when no logger is given: 1 (HTTP mode) or 2 (stdio mode, stdout is protocol). */
  logDestination?: number;
}

export function createRuntime<C extends BaseConfig>(def: ServerDef<C>, options: RuntimeOptions = {}): Runtime<C> {
  const config = def.loadConfig(options.env ?? process.env);
  const log =
    options.logger ??
    createLogger({ name: def.name, level: config.LOG_LEVEL, destination: options.logDestination ?? 1 });
  const outbound = createOutboundPolicy({
    allow: config.OUTBOUND_ALLOW,
    deny: config.OUTBOUND_DENY,
    allowSelf: config.OUTBOUND_ALLOW_SELF,
    allowlistOnly: def.outbound === "allowlist-only" ? def.name : undefined,
  });
  const tools = new Map(def.tools.map((t) => [t.name, t]));
  const streams = new Map(def.streams.map((s) => [s.name, s]));
  const execs = new WeakMap<AnyTool | AnyStream, Exec>();
  // The catalog names tools `<server>/<tool>`: that id is accepted wherever a name is.
  const ownName = (name: string) => (name.startsWith(`${def.name}/`) ? name.slice(def.name.length + 1) : name);
  const metrics = createMetrics({
    server: def.name,
    version: def.version,
    bounds: () => ({ tool_calls: runtime.calls, streams: runtime.streams, subprocesses: procs }),
  });
  const procs = createLimiter(config.MAX_PROCS, "subprocesses", () => metrics.refused("subprocesses"));
  const closing = new AbortController();
  // Every open stream listens for the shutdown: up to MAX_STREAMS listeners on one signal is the design, not a leak.
  setMaxListeners(config.MAX_STREAMS + 16, closing.signal);
  const closed = new AbortController();
  // Every call in flight listens (up to MAX_CALLS, each fanning out): bounded by the call slots, not a leak.
  setMaxListeners(0, closed.signal);
  const resources = createResourceScope<C>({ config, log });
  const runtime: Runtime<C> = {
    def,
    config,
    log,
    outbound,
    calls: createCallSlots(config.MAX_CALLS, () => metrics.refused("tool_calls")),
    streams: createCallSlots(config.MAX_STREAMS, () => metrics.refused("streams"), "streams"),
    procs,
    shared: createSharedCalls(),
    metrics,
    hub: createStreamHub(() => runtime),
    closing: closing.signal,
    closed: closed.signal,
    tool: (name) => tools.get(ownName(name)),
    stream: (name) => streams.get(ownName(name)),
    execFor(owner) {
      let exec = execs.get(owner);
      if (!exec) {
        exec = createExec(owner.commands, config.EXEC_PATH, procs);
        execs.set(owner, exec);
      }
      return exec;
    },
    use: (resource) => resources.use(resource),
    shutdown: () => closing.abort(),
    close() {
      closing.abort();
      closed.abort();
      return resources.close();
    },
  };
  return runtime;
}
