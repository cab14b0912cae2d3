/**
 * Guards on every route: Host and Origin against DNS rebinding (the MCP SDK gives Fastify none), and the
 * optional bearer token. A browser page on evil.example that rebinds its name to 127.0.0.1 still sends
 * `Host: evil.example`, so only names we were told about get through.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";
import type { FastifyRequest } from "fastify";
import { DiagError } from "../errors/errors.ts";

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
  // An IP literal Host is never a rebinding vector: a rebound name still arrives as that name.
  if (isIP(name) !== 0) return true;
  const bind = options.bindHost.toLowerCase();
  return bind !== "0.0.0.0" && bind !== "::" && name === bind;
}

/** localhost, ::1 or 127.x.x.x (a hostname as hostnameOf gives it: lower case, no brackets). */
export function isLoopback(name: string): boolean {
  return LOCAL_NAMES.includes(name) || /^127\.\d+\.\d+\.\d+$/.test(name);
}

/**
 * A browser page may call us only from a local origin (an MCP Inspector on localhost), the name we are bound
 * to, or ALLOWED_ORIGINS. Unlike Host, any IP literal will not do: a page served from 203.0.113.5 sends that.
 */
export function isAllowedOrigin(origin: string, options: GuardOptions): boolean {
  if (origin === "null") return false;
  if (options.allowedOrigins.includes(origin)) return true;
  try {
    const url = new URL(origin);
    if (url.protocol !== "http:" && url.protocol !== "https:") return false;
    const name = hostnameOf(url.host);
    const bind = options.bindHost.toLowerCase();
    return isLoopback(name) || options.allowedHosts.map((h) => h.toLowerCase()).includes(name) || name === bind;
  } catch {
    return false;
  }
}

/** Constant-time in the token's length too: compare digests, not the strings. */
export function hasValidToken(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? "");
  if (!m?.[1]) return false;
  const digest = (v: string) => createHash("sha256").update(v).digest();
  return timingSafeEqual(digest(m[1]), digest(token));
}

/** Throws a DiagError when the request must not be served. */
export function checkRequest(request: FastifyRequest, options: GuardOptions): void {
  if (!request.headers.host) {
    throw new DiagError("E_INVALID_INPUT", "no Host header", {
      hint: "HTTP/1.1 requests carry Host: 127.0.0.1:<port>",
    });
  }
  if (!isAllowedHost(request.headers.host, options)) {
    throw new DiagError("E_FORBIDDEN", "Host header not allowed", {
      hint: "add the name to ALLOWED_HOSTS if this server is reached through it",
    });
  }
  const origin = request.headers.origin;
  if (origin !== undefined && !isAllowedOrigin(origin, options)) {
    throw new DiagError("E_FORBIDDEN", "Origin not allowed", { hint: "add it to ALLOWED_ORIGINS" });
  }
  // <img>, <script> and navigations send no Origin, but browsers mark them: a page elsewhere must not run
  // tools through a plain GET /sse/<tool>.
  const site = request.headers["sec-fetch-site"];
  if ((site === "cross-site" || site === "same-site") && origin === undefined) {
    throw new DiagError("E_FORBIDDEN", "cross-site request without an Origin", {
      hint: "call from a page whose origin is allowed (ALLOWED_ORIGINS)",
    });
  }
  // A browser's CORS preflight never carries credentials: it is answered (for allowed origins only) without.
  const preflight = request.method === "OPTIONS" && request.headers["access-control-request-method"] !== undefined;
  if (
    options.authToken &&
    !preflight &&
    request.url.split("?")[0]?.replace(/\/$/, "") !== "/healthz" &&
    !hasValidToken(request.headers.authorization, options.authToken)
  ) {
    throw new DiagError("E_UNAUTHORIZED", "missing or wrong bearer token", {
      hint: "send Authorization: Bearer $AUTH_TOKEN",
    });
  }
}
