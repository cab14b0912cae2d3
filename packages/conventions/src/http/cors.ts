/**
 * CORS for browser-based MCP clients (the Inspector's web UI): preflights from allowed origins are answered
 * on every route with the MCP headers allowed and exposed; other origins never get here (the guard refuses
 * them with 403 first). Origins are the guard's own rule (isAllowedOrigin): this server's own origin and
 * ALLOWED_ORIGINS, judged per request (it needs the request's Host and socket).
 */
import cors from "@fastify/cors";
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

export async function registerCors(app: FastifyInstance, guard: GuardOptions): Promise<void> {
  const options = {
    methods: ["GET", "POST", "DELETE", "OPTIONS"],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 600,
    strictPreflight: true,
  };
  await app.register(cors, {
    delegator: (request, cb) => {
      const origin = request.headers.origin;
      cb(null, { ...options, origin: origin !== undefined && isAllowedOrigin(origin, request.raw, guard) });
    },
  });
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
