/** defineServer / buildApp: a server is a name, a default port, its tools and streams, and its allowlist. */
import fastifySse from "@fastify/sse";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import type { z } from "zod";
import { type BaseConfig, loadConfig } from "./config.ts";
import { createExec, type ExecAllowlist } from "./exec.ts";
import { checkRequest, type GuardOptions } from "./guards.ts";
import { registerErrorReplies } from "./http/error-replies.ts";
import { registerJsonBody } from "./http/json-body.ts";
import { createLogger, type Logger } from "./logger.ts";
import { createOutboundPolicy } from "./outbound/index.ts";
import { registerActions } from "./routes/actions.ts";
import { registerMcpHttp } from "./routes/mcp-http.ts";
import { registerMeta } from "./routes/meta.ts";
import { registerSse } from "./routes/sse.ts";
import type { BaseContext } from "./run-tool.ts";
import type { AnyStream } from "./stream.ts";
import type { AnyTool } from "./tool.ts";

export const BODY_LIMIT_BYTES = 64 * 1024;

export interface ServerSpec {
  /** Short name, e.g. "network": the tool id prefix and the bin suffix (roadnerd-network). */
  name: string;
  version: string;
  defaultPort: number;
  /** One line for MCP clients: what this server is for. */
  instructions: string;
  tools: readonly AnyTool[];
  streams?: readonly AnyStream[];
  /** Binaries this server may run, with their argument shapes. */
  exec?: ExecAllowlist;
  /** Extra env vars this server reads. */
  env?: z.ZodRawShape;
}

export interface ServerDef extends Required<Omit<ServerSpec, "env">> {
  env: z.ZodRawShape;
}

export function defineServer(spec: ServerSpec): ServerDef {
  const names = new Set<string>();
  for (const n of [...spec.tools.map((t) => t.name), ...(spec.streams ?? []).map((s) => s.name)]) {
    if (names.has(n)) throw new Error(`duplicate tool or stream name: ${n}`);
    names.add(n);
  }
  return { streams: [], exec: {}, env: {}, ...spec };
}

export type ServerConfig = Readonly<BaseConfig & Record<string, unknown>>;

export interface BuildOptions {
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
}

export function serverConfig(def: ServerDef, env: NodeJS.ProcessEnv = process.env): ServerConfig {
  return loadConfig(env, def.env) as ServerConfig;
}

export function baseContext(def: ServerDef, config: ServerConfig, log: Logger): BaseContext {
  return {
    log,
    config,
    exec: createExec(def.exec, config.EXEC_PATH),
    outbound: createOutboundPolicy({ allow: config.OUTBOUND_ALLOW, deny: config.OUTBOUND_DENY }),
  };
}

export async function buildApp(def: ServerDef, options: BuildOptions = {}): Promise<FastifyInstance> {
  const config = serverConfig(def, options.env);
  const log = options.logger ?? createLogger({ name: def.name, level: config.LOG_LEVEL });
  const base = baseContext(def, config, log);
  const guard: GuardOptions = {
    bindHost: config.HOST,
    allowedHosts: config.ALLOWED_HOSTS,
    allowedOrigins: config.ALLOWED_ORIGINS,
    authToken: config.AUTH_TOKEN,
  };
  const identity = { name: `roadnerd-${def.name}`, version: def.version, instructions: def.instructions };

  const app: FastifyInstance = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    // runTool logs each call with its tool, run_id and duration; per-request lines would only repeat it.
    logController: new LogController({ disableRequestLogging: true }),
    // On close, end open SSE streams too (their work is aborted on disconnect) instead of waiting them out.
    forceCloseConnections: true,
  });
  await app.register(fastifySse, { heartbeatInterval: 0 });
  registerJsonBody(app);
  app.addHook("onRequest", async (request) => checkRequest(request, guard));
  registerErrorReplies(app, BODY_LIMIT_BYTES);

  registerMeta(app, {
    authToken: config.AUTH_TOKEN,
    name: identity.name,
    version: def.version,
    binaries: Object.keys(def.exec),
    execPath: config.EXEC_PATH,
    tools: def.tools,
    streams: def.streams,
  });
  registerActions(app, def.name, def.tools, base);
  registerSse(app, def.tools, def.streams, base);
  registerMcpHttp(app, identity, def.tools, base);
  return app;
}
