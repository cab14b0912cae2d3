/** /healthz (liveness and what this server can see) and /openapi.json, both computed once. */
import type { FastifyInstance } from "fastify";
import { type Capabilities, detectCapabilities } from "../capabilities.ts";
import { hasValidToken } from "../guards.ts";
import { buildOpenApi } from "../openapi.ts";
import type { AnyStream } from "../stream.ts";
import type { AnyTool } from "../tool.ts";

export interface MetaOptions {
  /** With AUTH_TOKEN set, /healthz stays open but tells only liveness to callers without the token. */
  authToken: string | undefined;
  name: string;
  version: string;
  binaries: readonly string[];
  execPath: string;
  tools: readonly AnyTool[];
  streams: readonly AnyStream[];
}

export function registerMeta(app: FastifyInstance, options: MetaOptions): void {
  let capabilities: Promise<Capabilities> | undefined;
  app.get("/healthz", async (request) => {
    const live = { ok: true, name: options.name, version: options.version };
    if (options.authToken && !hasValidToken(request.headers.authorization, options.authToken)) return live;
    capabilities ??= detectCapabilities(options.binaries, options.execPath);
    return { ...live, capabilities: await capabilities };
  });

  let openapi: unknown;
  app.get("/openapi.json", async () => {
    openapi ??= buildOpenApi(options, options.tools, options.streams);
    return openapi;
  });
}
