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

/**
 * A Host header as RFC 9110 has it: a name, an IPv4 address or a bracketed IPv6 address, then an optional port.
 * Nothing may follow the bracket but the port: `[::1].evil.com` is not ::1.
 */
const HOST_SHAPE = /^(?:\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(?::\d{1,5})?$/;

/** Host header → hostname without port, lowercased; IPv6 brackets removed. */
export function hostnameOf(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase();
  if (h.startsWith("[")) return h.slice(1, h.indexOf("]"));
  const colon = h.lastIndexOf(":");
  return colon > 0 && h.indexOf(":") === colon ? h.slice(0, colon) : h;
}

/** A name in ALLOWED_HOSTS, whatever its case there (no list made per request). */
function isListedHost(name: string, options: GuardOptions): boolean {
  return options.allowedHosts.some((h) => h.toLowerCase() === name);
}

/**
 * The last Host header each server's options allowed: a client sends the same one on every request, and the
 * verdict depends on nothing else, so the same string is let through without being judged again (ADR 0037).
 */
const lastAllowedHost = new WeakMap<GuardOptions, string>();

export function isAllowedHost(hostHeader: string | undefined, options: GuardOptions): boolean {
  if (!hostHeader) return false;
  if (lastAllowedHost.get(options) === hostHeader) return true;
  const allowed = judgeHost(hostHeader, options);
  if (allowed) lastAllowedHost.set(options, hostHeader);
  return allowed;
}

function judgeHost(hostHeader: string, options: GuardOptions): boolean {
  const h = hostHeader.trim().toLowerCase();
  if (!HOST_SHAPE.test(h)) return false;
  const name = hostnameOf(h);
  if (isListedHost(name, options)) return true;
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
    return isLoopback(name) || isListedHost(name, options) || name === bind;
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

/** How many Host headers the request carried (Node keeps the first of several and drops the rest). */
export function hostHeaderCount(rawHeaders: readonly string[]): number {
  let n = 0;
  // Only a four-letter name is lower-cased: no string made per header.
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name?.length === 4 && name.toLowerCase() === "host") n += 1;
  }
  return n;
}

/** The port a URL or Host header names, its scheme's default when it names none. */
function portOf(hostPort: string, scheme: string): string {
  const m = /:(\d{1,5})$/.exec(hostPort.replace(/^\[[^\]]*\]/, ""));
  return m?.[1] ?? (scheme === "https:" ? "443" : "80");
}

/** An Origin that is this very server: the same port, and the same name or both loopback (localhost vs 127.0.0.1). */
function isOwnOrigin(origin: string, hostHeader: string): boolean {
  try {
    const url = new URL(origin);
    const ours = hostnameOf(hostHeader);
    const theirs = hostnameOf(url.host);
    const sameName = theirs === ours || (isLoopback(theirs) && isLoopback(ours));
    return sameName && portOf(url.host, url.protocol) === portOf(hostHeader.trim(), "http:");
  } catch {
    return false;
  }
}

/**
 * A GET that runs a tool (`/sse/<tool>`) may come from a browser only as a script's CORS request (EventSource,
 * fetch: Sec-Fetch-Mode cors, destination empty), which carries an Origin the check above judges. A navigation,
 * a frame, an <img> or a no-cors fetch is refused whatever its site: a page (or a headless browser told to open
 * the URL) must not run tools with a link. And the Origin must be this server or listed in ALLOWED_ORIGINS:
 * any loopback origin will do for POST (the MCP Inspector on localhost:6274), but a page served on another
 * loopback port (a dev server, another user's web app) must not open tool streams here. A GET with neither
 * Fetch Metadata nor an Origin (curl; a browser older than Fetch Metadata) cannot be told from a client and is
 * served: see docs/security.md.
 */
function checkBrowserGet(request: FastifyRequest, options: GuardOptions): void {
  if (request.method !== "GET" || !request.url.startsWith("/sse/")) return;
  const mode = request.headers["sec-fetch-mode"];
  const dest = request.headers["sec-fetch-dest"];
  if ((mode !== undefined && mode !== "cors") || (dest !== undefined && dest !== "empty")) {
    throw new DiagError("E_FORBIDDEN", `a browser ${mode ?? dest} request may not run a tool`, {
      hint: "open streams with EventSource or fetch from a page whose origin is allowed (ALLOWED_ORIGINS)",
    });
  }
  const origin = request.headers.origin;
  if (origin === undefined || options.allowedOrigins.includes(origin)) return;
  if (!isOwnOrigin(origin, request.headers.host ?? "")) {
    throw new DiagError("E_FORBIDDEN", "a page on another origin may not open a tool stream", {
      hint: "list the page's origin in ALLOWED_ORIGINS (exactly, with its port)",
    });
  }
}

/** Throws a DiagError when the request must not be served. */
export function checkRequest(request: FastifyRequest, options: GuardOptions): void {
  if (hostHeaderCount(request.raw.rawHeaders) > 1) {
    throw new DiagError("E_INVALID_INPUT", "more than one Host header", { hint: "send exactly one Host header" });
  }
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
  checkBrowserGet(request, options);
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
