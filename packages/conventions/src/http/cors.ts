/**
 * CORS for browser-based MCP clients (the Inspector's web UI): preflights from allowed origins are answered
 * on every route with the MCP headers allowed and exposed; other origins never get here (the guard refuses
 * them with 403 first). Origins are the guard's own rule: loopback, the bound name, ALLOWED_ORIGINS.
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
  await app.register(cors, {
    origin: (origin, cb) => cb(null, origin !== undefined && isAllowedOrigin(origin, guard)),
    methods: ["GET", "POST", "DELETE", "OPTIONS"],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 600,
    strictPreflight: true,
  });
}
