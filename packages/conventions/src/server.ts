/** defineServer / buildApp: a server is a name, a default port, its tools and streams, and its allowlist. */
import fastifySse from "@fastify/sse";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import type { z } from "zod";
import { type Capabilities, detectCapabilities } from "./capabilities.ts";
import { type BaseConfig, loadConfig } from "./config.ts";
import { DiagError, errorBody, toDiagError } from "./errors.ts";
import { createExec, type ExecAllowlist } from "./exec.ts";
import { checkRequest, type GuardOptions } from "./guards.ts";
import { createLogger, type Logger } from "./logger.ts";
import { buildOpenApi } from "./openapi.ts";
import { createOutboundPolicy } from "./outbound/index.ts";
import type { BaseContext } from "./run-tool.ts";
import { runTool } from "./run-tool.ts";
import { inputJsonSchema, outputJsonSchema } from "./schemas.ts";
import { registerSse } from "./sse.ts";
import type { AnyStream } from "./stream.ts";
import { closestNames } from "./suggest.ts";
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
  const toolsByName = new Map(def.tools.map((t) => [t.name, t]));
  const identity = { name: `roadnerd-${def.name}`, version: def.version, instructions: def.instructions };

  const app: FastifyInstance = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    // runTool logs each call with its tool, run_id and duration; per-request lines would only repeat it.
    logController: new LogController({ disableRequestLogging: true }),
  });
  await app.register(fastifySse, { heartbeatInterval: 0 });

  // Empty body means {}; malformed JSON is a typed 400 (Fastify's default parser, so no prototype poisoning).
  const jsonParser = app.getDefaultJsonParser("error", "error");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    const text = String(body);
    if (text.trim() === "") return done(null, {});
    jsonParser(request, text, (err, value) =>
      err
        ? done(new DiagError("E_INVALID_INPUT", `malformed JSON body: ${err.message.slice(0, 120)}`), undefined)
        : done(null, value),
    );
  });

  app.addHook("onRequest", async (request) => checkRequest(request, guard));

  app.setErrorHandler((err, request, reply) => {
    const diag = toDiagError(err);
    if (diag.code === "E_INTERNAL") request.log.error({ err }, "request failed");
    const body = request.body as { run_id?: unknown } | undefined;
    const runId = typeof body?.run_id === "string" ? body.run_id : undefined;
    void reply.code(diag.status).send(errorBody(diag, runId));
  });

  app.setNotFoundHandler((request, reply) => {
    const err = new DiagError("E_UNKNOWN_TOOL", `no route ${request.method} ${request.url.slice(0, 80)}`, {
      hint: "try GET /actions for the tool list, POST /actions/<tool>, GET /sse/<tool>",
    });
    void reply.code(err.status).send(errorBody(err));
  });

  let capabilities: Promise<Capabilities> | undefined;
  app.get("/healthz", async () => {
    capabilities ??= detectCapabilities(Object.keys(def.exec), config.EXEC_PATH);
    return { ok: true, name: identity.name, version: def.version, capabilities: await capabilities };
  });

  app.get("/actions", async () =>
    def.tools.map((t) => ({
      tool: `${def.name}/${t.name}`,
      summary: t.summary,
      input: inputJsonSchema(t.inputSchema),
    })),
  );

  const unknownTool = (name: string) =>
    new DiagError("E_UNKNOWN_TOOL", `no tool named ${name.slice(0, 64)}`, {
      hint: `closest: ${closestNames(name, [...toolsByName.keys()]).join(", ")}`,
    });

  app.get<{ Params: { tool: string } }>("/actions/:tool", async (request) => {
    const tool = toolsByName.get(request.params.tool);
    if (!tool) throw unknownTool(request.params.tool);
    return {
      tool: `${def.name}/${tool.name}`,
      summary: tool.summary,
      call: `POST /actions/${tool.name}`,
      example: tool.example,
      input: inputJsonSchema(tool.inputSchema),
      output: outputJsonSchema(tool.outputSchema),
    };
  });

  app.post<{ Params: { tool: string } }>("/actions/:tool", async (request, reply) => {
    const tool = toolsByName.get(request.params.tool);
    if (!tool) throw unknownTool(request.params.tool);
    // The caller hanging up cancels the work (subprocesses included).
    const gone = new AbortController();
    reply.raw.once("close", () => {
      if (!reply.raw.writableFinished) gone.abort();
    });
    return runTool(tool, request.body, base, { signal: gone.signal });
  });

  app.route({
    method: ["PUT", "PATCH", "DELETE"],
    url: "/actions/:tool",
    handler: async () => {
      throw new DiagError("E_UNSUPPORTED", "servers are read-only: call tools with POST /actions/<tool>");
    },
  });

  registerSse(app, def.tools, def.streams, base);

  let openapi: unknown;
  app.get("/openapi.json", async () => {
    openapi ??= buildOpenApi(identity, def.tools, def.streams);
    return openapi;
  });

  app.post("/mcp", async (request, reply) => {
    const { handleMcpPost } = await import("./mcp.ts");
    await handleMcpPost(request, reply, identity, def.tools, base);
  });
  app.route({
    method: ["GET", "DELETE"],
    url: "/mcp",
    handler: async (_request, reply) =>
      reply
        .code(405)
        .header("allow", "POST")
        .send({
          jsonrpc: "2.0",
          error: { code: -32000, message: "Method not allowed: this server is stateless, use POST" },
          id: null,
        }),
  });

  return app;
}
