/** /healthz (liveness and what this server can see) and /openapi.json, both computed once. */
import type { FastifyInstance } from "fastify";
import { binariesOf } from "../../define/command.ts";
import { type Capabilities, detectCapabilities } from "../../runtime/capabilities.ts";
import type { Runtime } from "../../runtime/runtime.ts";
import { hasValidToken } from "../guards.ts";
import { buildOpenApi } from "../openapi.ts";

export function registerMeta(app: FastifyInstance, runtime: Runtime<unknown>): void {
  const { def, config } = runtime;
  const live = { ok: true, name: `roadnerd-${def.name}`, version: def.version };
  let capabilities: Promise<Capabilities> | undefined;
  /** The whole answer once capabilities are known: the same object every time after that. */
  let full: (typeof live & { capabilities: Capabilities }) | undefined;
  app.get("/healthz", async (request) => {
    // With AUTH_TOKEN set, /healthz stays open but tells only liveness to callers without the token.
    if (config.AUTH_TOKEN && !hasValidToken(request.headers.authorization, config.AUTH_TOKEN)) return live;
    if (full) return full;
    capabilities ??= detectCapabilities(binariesOf(def.commands), config.EXEC_PATH);
    full = { ...live, capabilities: await capabilities };
    return full;
  });

  // Someone who opens the bare URL learns where everything is.
  app.get("/", async () => ({
    ...live,
    summary: def.summary,
    endpoints: {
      health: "GET /healthz",
      catalog: "GET /actions",
      call: "POST /actions/<tool> with a JSON body",
      stream: "GET /sse/<tool or stream>?<input as query>",
      mcp: "POST /mcp (Streamable HTTP, stateless)",
      openapi: "GET /openapi.json",
    },
    tools: def.tools.map((t) => t.name),
    streams: def.streams.map((s) => s.name),
  }));

  let openapi: unknown;
  app.get("/openapi.json", async () => {
    openapi ??= buildOpenApi({ name: live.name, version: def.version }, def.tools, def.streams);
    return openapi;
  });
}
