/**
 * CORS for browser-based MCP clients (the Inspector's web UI): preflights from allowed origins are answered
 * on every route with the MCP headers allowed and exposed; other origins never get here (the guard refuses
 * them with 403 first). Origins are the guard's own rule (isAllowedOrigin): this server's own origin and
 * ALLOWED_ORIGINS, judged per request (it needs the request's Host and socket).
 */
import type { FastifyInstance } from "fastify";
import { type GuardOptions, isAllowedOrigin } from "./guards.ts";

export const CORS_ALLOWED_HEADERS = [
  "content-type",
  "accept",
  "authorization",
  "mcp-protocol-version",
  "mcp-session-id",
  "last-event-id",
];
export const CORS_EXPOSED_HEADERS = ["mcp-protocol-version", "mcp-session-id", "retry-after"];

/**
 * One hook, in place of @fastify/cors (issue 17 target 5): a request without Origin (every non-browser client,
 * /healthz probes) costs one header, not the plugin's three option copies per request. The answers are the
 * plugin's as configured before: `Vary: Origin` on every response; for an allowed Origin its headers; a preflight
 * (OPTIONS from an allowed Origin) answered 204 in the hook, before any route, and 400 without
 * Access-Control-Request-Method (strict preflight); any other OPTIONS a 404.
 */
export function registerCors(app: FastifyInstance, guard: GuardOptions): void {
  app.addHook("onRequest", (request, reply, done) => {
    const origin = request.headers.origin;
    if (origin === undefined || !isAllowedOrigin(origin, request.raw, guard)) {
      // Every answer depends on Origin, so caches must key on it whether or not this request carried one.
      void reply.header("vary", "Origin");
      return done();
    }
    const preflight = request.method === "OPTIONS";
    if (preflight && request.headers["access-control-request-method"] === undefined) {
      void reply.headers(corsHeaders(origin, false)).code(400).type("text/plain").send("Invalid Preflight Request");
      return;
    }
    void reply.headers(corsHeaders(origin, preflight));
    if (!preflight) return done();
    void reply.code(204).header("content-length", "0").send();
  });
  // Fastify answers OPTIONS only where a route exists; a preflight never reaches it (answered above).
  app.options("*", (_request, reply) => reply.callNotFound());
}

/**
 * The same CORS answer for a plain node:http server (the gateway): the headers for an allowed Origin, and for
 * its preflight (`OPTIONS` with `Access-Control-Request-Method`) the methods, headers and max-age too.
 */
export function corsHeaders(origin: string, preflight: boolean): Record<string, string> {
  const always = {
    "access-control-allow-origin": origin,
    vary: "Origin",
    "access-control-expose-headers": CORS_EXPOSED_HEADERS.join(","),
  };
  if (!preflight) return always;
  return {
    ...always,
    "access-control-allow-methods": "GET,POST,DELETE,OPTIONS",
    "access-control-allow-headers": CORS_ALLOWED_HEADERS.join(","),
    "access-control-max-age": "600",
  };
}
