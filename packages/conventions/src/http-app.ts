/** buildApp: the Fastify app of one server, every route reading the same runtime. Only main.ts listens. */
import fastifySse from "@fastify/sse";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import type { BaseConfig } from "./config.ts";
import { checkRequest, type GuardOptions } from "./guards.ts";
import { registerErrorReplies } from "./http/error-replies.ts";
import { registerJsonBody } from "./http/json-body.ts";
import type { Logger } from "./logger.ts";
import { registerActions } from "./routes/actions.ts";
import { registerMcpHttp } from "./routes/mcp-http.ts";
import { registerMeta } from "./routes/meta.ts";
import { registerSse } from "./routes/sse.ts";
import { createRuntime, type Runtime, type RuntimeOptions } from "./runtime.ts";
import type { ServerDef } from "./server-def.ts";

export const BODY_LIMIT_BYTES = 64 * 1024;

const LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"];

/** Fastify's own info lines ("Server listening at …") would precede ours; it gets warn and above only. */
function fastifyLogger(log: Logger): FastifyBaseLogger {
  const level = LEVELS.indexOf(log.level) > LEVELS.indexOf("warn") ? log.level : "warn";
  return log.child({}, { level }) as FastifyBaseLogger;
}

export async function buildHttpApp(runtime: Runtime<unknown>): Promise<FastifyInstance> {
  const config: BaseConfig = runtime.config;
  const guard: GuardOptions = {
    bindHost: config.HOST,
    allowedHosts: config.ALLOWED_HOSTS,
    allowedOrigins: config.ALLOWED_ORIGINS,
    authToken: config.AUTH_TOKEN,
  };
  const app: FastifyInstance = Fastify({
    loggerInstance: fastifyLogger(runtime.log),
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
  registerMeta(app, runtime);
  registerActions(app, runtime);
  registerSse(app, runtime);
  registerMcpHttp(app, runtime);
  return app;
}

/** A server's HTTP app from its definition: the runtime (config from `env`, default process.env) and the routes. */
export function buildApp<C extends BaseConfig>(
  def: ServerDef<C>,
  options: RuntimeOptions = {},
): Promise<FastifyInstance> {
  return buildHttpApp(createRuntime(def, options));
}
