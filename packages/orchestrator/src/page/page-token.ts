/**
 * The gateway's bearer token (ROADNERD_GATEWAY_TOKEN), checked on every route but /healthz and the page's two
 * static files (they hold no data). The page itself is a navigation, which cannot carry a header: it takes
 * `?token=` instead, and its script sends that as the bearer on every API call. And, as the servers' guard
 * does, a cross-site request without an Origin (an <img> or a link on another site) never reaches the API.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

const NO_DATA = new Set(["/page.js", "/page.css"]);

/** Constant-time in the token's length too: compare digests, not the strings. */
function same(given: string, token: string): boolean {
  const digest = (v: string) => createHash("sha256").update(v).digest();
  return timingSafeEqual(digest(given), digest(token));
}

export interface Refusal {
  status: number;
  body: { error: { code: string; message: string; hint: string } };
}

export function tokenRefusal(req: IncomingMessage, token: string | undefined): Refusal | undefined {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const site = req.headers["sec-fetch-site"];
  if (url.pathname.startsWith("/api/") && (site === "cross-site" || site === "same-site")) {
    const hint = "open the page at http://127.0.0.1:<port>/ itself";
    return { status: 403, body: { error: { code: "E_FORBIDDEN", message: "cross-site request", hint } } };
  }
  if (!token || NO_DATA.has(url.pathname)) return undefined;
  const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "")?.[1];
  const query = url.pathname === "/" && req.method === "GET" ? url.searchParams.get("token") : null;
  const given = bearer ?? query;
  if (given && same(given, token)) return undefined;
  const hint =
    url.pathname === "/"
      ? "open http://127.0.0.1:<port>/?token=$ROADNERD_GATEWAY_TOKEN"
      : "send Authorization: Bearer $ROADNERD_GATEWAY_TOKEN";
  return { status: 401, body: { error: { code: "E_UNAUTHORIZED", message: "missing or wrong bearer token", hint } } };
}
