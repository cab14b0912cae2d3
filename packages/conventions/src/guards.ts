/**
 * Guards on every route: Host and Origin against DNS rebinding (the MCP SDK gives Fastify none), and the
 * optional bearer token. A browser page on evil.example that rebinds its name to 127.0.0.1 still sends
 * `Host: evil.example`, so only names we were told about get through.
 */
import { timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";
import type { FastifyRequest } from "fastify";
import { DiagError } from "./errors.ts";

export interface GuardOptions {
  bindHost: string;
  allowedHosts: readonly string[];
  allowedOrigins: readonly string[];
  authToken: string | undefined;
}

const LOCAL_NAMES = ["localhost", "127.0.0.1", "::1"];

/** Host header → hostname without port, lowercased; IPv6 brackets removed. */
export function hostnameOf(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase();
  if (h.startsWith("[")) return h.slice(1, h.indexOf("]"));
  const colon = h.lastIndexOf(":");
  return colon > 0 && h.indexOf(":") === colon ? h.slice(0, colon) : h;
}

export function isAllowedHost(hostHeader: string | undefined, options: GuardOptions): boolean {
  if (!hostHeader) return false;
  const name = hostnameOf(hostHeader);
  if (options.allowedHosts.map((h) => h.toLowerCase()).includes(name)) return true;
  if (LOCAL_NAMES.includes(name)) return true;
  // An IP literal is never a rebinding vector: the attacker's page cannot make the browser send one.
  if (isIP(name) !== 0) return true;
  const bind = options.bindHost.toLowerCase();
  return bind !== "0.0.0.0" && bind !== "::" && name === bind;
}

export function isAllowedOrigin(origin: string, options: GuardOptions): boolean {
  if (origin === "null") return false;
  if (options.allowedOrigins.includes(origin)) return true;
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") && isAllowedHost(url.host, options);
  } catch {
    return false;
  }
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? "");
  if (!m?.[1]) return false;
  const a = Buffer.from(m[1]);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Throws a DiagError when the request must not be served. */
export function checkRequest(request: FastifyRequest, options: GuardOptions): void {
  if (!isAllowedHost(request.headers.host, options)) {
    throw new DiagError("E_FORBIDDEN", "Host header not allowed", {
      hint: "add the name to ALLOWED_HOSTS if this server is reached through it",
    });
  }
  const origin = request.headers.origin;
  if (origin !== undefined && !isAllowedOrigin(origin, options)) {
    throw new DiagError("E_FORBIDDEN", "Origin not allowed", { hint: "add it to ALLOWED_ORIGINS" });
  }
  if (
    options.authToken &&
    request.url !== "/healthz" &&
    !tokenMatches(request.headers.authorization, options.authToken)
  ) {
    throw new DiagError("E_UNAUTHORIZED", "missing or wrong bearer token", {
      hint: "send Authorization: Bearer $AUTH_TOKEN",
    });
  }
}
