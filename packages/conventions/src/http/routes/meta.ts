/** /healthz (liveness and what this server can see) and /openapi.json, both computed once. */
import type { FastifyInstance, FastifyReply } from "fastify";
import { binariesOf } from "../../define/command.ts";
import { type Capabilities, detectCapabilities } from "../../runtime/capabilities.ts";
import type { Runtime } from "../../runtime/runtime.ts";
import { hasValidToken } from "../guards.ts";
import { buildOpenApi } from "../openapi.ts";

/** What Fastify says for an object it serializes: the cached /healthz string goes out under the same type. */
const JSON_UTF8 = "application/json; charset=utf-8";

export function registerMeta(app: FastifyInstance, runtime: Runtime<unknown>): void {
  const { def, config } = runtime;
  const live = { ok: true, name: `roadnerd-${def.name}`, version: def.version };
  let capabilities: Promise<Capabilities> | undefined;
  /**
   * The whole answer as JSON once capabilities are known: the same string every time after that, sent by a
   * plain handler (no promise, no serializing per request: the route a supervisor polls, ADR 0037).
   */
  let full: string | undefined;
  const sendFull = (reply: FastifyReply, body: string) => void reply.type(JSON_UTF8).send(body);
  app.get("/healthz", (request, reply) => {
    // With AUTH_TOKEN set, /healthz stays open but tells only liveness to callers without the token.
    if (config.AUTH_TOKEN && !hasValidToken(request.headers.authorization, config.AUTH_TOKEN)) {
      void reply.send(live);
      return;
    }
    if (full !== undefined) return sendFull(reply, full);
    capabilities ??= detectCapabilities(binariesOf(def.commands), config.EXEC_PATH);
    capabilities.then(
      (found) => {
        full ??= JSON.stringify({ ...live, capabilities: found });
        sendFull(reply, full);
      },
      (err: unknown) => void reply.send(err),
    );
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
