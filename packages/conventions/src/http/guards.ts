/**
 * Guards on every route: Host and Origin against DNS rebinding (the MCP SDK gives Fastify none), and the
 * optional bearer token. A browser page on evil.example that rebinds its name to 127.0.0.1 still sends
 * `Host: evil.example`, so only names we were told about get through.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { networkInterfaces } from "node:os";
import type { FastifyRequest } from "fastify";
import { ipFamily } from "../define/fields.ts";
import { isSerializedOrigin } from "../define/list-entries.ts";
import { DiagError } from "../errors/errors.ts";
import { HOP_REFUSAL, isToolHop } from "../outbound/hop.ts";

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
  if (ipFamily(name) !== 0) return true;
  const bind = options.bindHost.toLowerCase();
  return bind !== "0.0.0.0" && bind !== "::" && name === bind;
}

/** localhost, ::1 or 127.x.x.x (a hostname as hostnameOf gives it: lower case, no brackets). */
export function isLoopback(name: string): boolean {
  return LOCAL_NAMES.includes(name) || /^127\.\d+\.\d+\.\d+$/.test(name);
}

/** What an Origin is judged against: the request's Host and the socket it arrived on (node's request). */
export interface OriginTarget {
  headers: { host?: string | undefined };
  socket: { localAddress?: string | undefined; encrypted?: boolean };
}

/** The address a connection reached, IPv4-mapped IPv6 (`::ffff:127.0.0.1`) as IPv4. */
function localName(target: OriginTarget): string {
  return (target.socket.localAddress ?? "").toLowerCase().replace(/^::ffff:(?=\d+\.)/, "");
}

/** Loopback and this machine's interface addresses: what a wildcard bind holds (lower case, no brackets). */
function isMachineAddress(ip: string, family: 4 | 6 | 0): boolean {
  if (/^127\.\d+\.\d+\.\d+$/.test(ip)) return family !== 6;
  if (ip === "::1") return family !== 4;
  return Object.values(networkInterfaces()).some((list) =>
    (list ?? []).some((a) => a.address.toLowerCase() === ip && (family === 0 || a.family === `IPv${family}`)),
  );
}

/**
 * Whether a name at our port reaches this very server, not another process: the address the connection arrived
 * on, `localhost` when that address is 127.0.0.1 or ::1, ALLOWED_HOSTS, the bind, and with a wildcard bind the
 * machine's own addresses of its family. A name (not an address) the browser sent as Host counts too: the Host
 * check let only listed, local and bound names through. An address in the Host counts only as one of those: a
 * page and a Host naming 10.9.9.9 do not make 10.9.9.9 ours. Not any loopback name: while we listen on 127.0.0.1,
 * another user can listen on 127.0.0.2 or [::1] at the same port.
 */
function reachesUs(name: string, target: OriginTarget, options: OriginOptions): boolean {
  const local = localName(target);
  if (name === local) return true;
  if (name === "localhost" && (local === "127.0.0.1" || local === "::1")) return true;
  if (options.allowedHosts.some((h) => h.toLowerCase() === name)) return true;
  const bind = options.bindHost.replace(/^\[|\]$/g, "").toLowerCase();
  if (name === bind) return true;
  if (ipFamily(name) !== 0) {
    if (bind === "::") return isMachineAddress(name, 0);
    return bind === "0.0.0.0" && ipFamily(name) === 4 && isMachineAddress(name, 4);
  }
  return name === hostnameOf(target.headers.host ?? "");
}

/** The port a URL or Host header names, its scheme's default when it names none. */
function portOf(hostPort: string, scheme: string): string {
  const m = /:(\d{1,5})$/.exec(hostPort.replace(/^\[[^\]]*\]/, ""));
  return m?.[1] ?? (scheme === "https:" ? "443" : "80");
}

export type OriginOptions = Pick<GuardOptions, "bindHost" | "allowedHosts" | "allowedOrigins">;

/**
 * The one rule for browser Origins, on every route and at the gateway (ADR 0034): ALLOWED_ORIGINS exactly, or
 * this server's own origin — its scheme, the port the browser asked for (the Host's), and a name that
 * reaches us (above). Any other origin is refused, loopback or not: a page another local user serves on
 * 127.0.0.2 or another port would otherwise read our answers through the victim's browser, as the victim.
 */
export function isAllowedOrigin(origin: string, target: OriginTarget, options: OriginOptions): boolean {
  if (!isSerializedOrigin(origin)) return false;
  if (options.allowedOrigins.includes(origin)) return true;
  const url = new URL(origin);
  const scheme = target.socket.encrypted ? "https:" : "http:";
  if (url.protocol !== scheme) return false;
  const host = (target.headers.host ?? "").trim();
  if (portOf(url.host, url.protocol) !== portOf(host, scheme)) return false;
  return reachesUs(hostnameOf(url.host), target, options);
}

/**
 * The hint for a refused Origin: for a loopback page (the MCP Inspector's direct mode on localhost:6274), the
 * exact setting, naming the origin as the URL parser normalises it (scheme, host, port: nothing else echoed).
 */
export function originRefusalHint(origin: string): string {
  let loopback: string | undefined;
  try {
    const url = new URL(origin);
    if (isLoopback(hostnameOf(url.host))) loopback = url.origin;
  } catch {
    loopback = undefined;
  }
  return loopback
    ? `only this server's own origin is served: list the page's origin in ALLOWED_ORIGINS (the MCP Inspector: ALLOWED_ORIGINS=${loopback})`
    : "list the page's origin in ALLOWED_ORIGINS (exactly, with its scheme and port)";
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

/**
 * A GET that runs a tool (`/sse/<tool>`) may come from a browser only as a script's CORS request (EventSource,
 * fetch: Sec-Fetch-Mode cors, destination empty), which carries an Origin the rule above judges. A navigation,
 * a frame, an <img> or a no-cors fetch is refused whatever its site: a page (or a headless browser told to open
 * the URL) must not run tools with a link. A GET with neither Fetch Metadata nor an Origin (curl; a browser
 * older than Fetch Metadata) cannot be told from a client and is served: see docs/security.md.
 */
function checkBrowserGet(request: FastifyRequest): void {
  if (request.method !== "GET" || !request.url.startsWith("/sse/")) return;
  const mode = request.headers["sec-fetch-mode"];
  const dest = request.headers["sec-fetch-dest"];
  if ((mode !== undefined && mode !== "cors") || (dest !== undefined && dest !== "empty")) {
    throw new DiagError("E_FORBIDDEN", `a browser ${mode ?? dest} request may not run a tool`, {
      hint: "open streams with EventSource or fetch from a page whose origin is allowed (ALLOWED_ORIGINS)",
    });
  }
}

/** Throws a DiagError when the request must not be served. */
export function checkRequest(request: FastifyRequest, options: GuardOptions): void {
  // First: a RoadNerd tool's own request (a sibling's probe, proxy or browser) runs nothing here (ADR 0047).
  if (isToolHop(request.headers)) throw new DiagError("E_FORBIDDEN", HOP_REFUSAL);
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
  if (origin !== undefined && !isAllowedOrigin(origin, request.raw, options)) {
    throw new DiagError("E_FORBIDDEN", "Origin not allowed", { hint: originRefusalHint(origin) });
  }
  // <img>, <script> and navigations send no Origin, but browsers mark them: a page elsewhere must not run
  // tools through a plain GET /sse/<tool>.
  const site = request.headers["sec-fetch-site"];
  if ((site === "cross-site" || site === "same-site") && origin === undefined) {
    throw new DiagError("E_FORBIDDEN", "cross-site request without an Origin", {
      hint: "call from a page whose origin is allowed (ALLOWED_ORIGINS)",
    });
  }
  checkBrowserGet(request);
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
