/**
 * A server's runtime, built once per process (or per test app): its typed config, logger, outbound policy,
 * and one exec per tool or stream that runs only the commands it declared. Every surface (HTTP, SSE, MCP
 * over HTTP or stdio) calls tools through it.
 */
import type { BaseConfig } from "./config.ts";
import { createExec, type Exec } from "./exec.ts";
import { createLogger, type Logger } from "./logger.ts";
import { createOutboundPolicy, type OutboundPolicy } from "./outbound/index.ts";
import type { ServerDef } from "./server-def.ts";
import type { AnyStream } from "./stream.ts";
import type { AnyTool } from "./tool.ts";

export interface Runtime<C = BaseConfig> {
  readonly def: ServerDef<C>;
  readonly config: C & BaseConfig;
  readonly log: Logger;
  readonly outbound: OutboundPolicy;
  tool(name: string): AnyTool | undefined;
  stream(name: string): AnyStream | undefined;
  /** The exec that runs exactly the commands `owner` declared. */
  execFor(owner: AnyTool | AnyStream): Exec;
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
  const outbound = createOutboundPolicy({ allow: config.OUTBOUND_ALLOW, deny: config.OUTBOUND_DENY });
  const tools = new Map(def.tools.map((t) => [t.name, t]));
  const streams = new Map(def.streams.map((s) => [s.name, s]));
  const execs = new WeakMap<AnyTool | AnyStream, Exec>();
  return {
    def,
    config,
    log,
    outbound,
    tool: (name) => tools.get(name),
    stream: (name) => streams.get(name),
    execFor(owner) {
      let exec = execs.get(owner);
      if (!exec) {
        exec = createExec(owner.commands, config.EXEC_PATH);
        execs.set(owner, exec);
      }
      return exec;
    },
  };
}
