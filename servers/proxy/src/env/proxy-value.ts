/**
 * A proxy setting as written (`http://alice:s3cret@proxy.corp:3128`, or `alice:s3cret@proxy.corp:3128` with
 * no scheme, which `new URL()` reads as scheme `alice:`): credentials masked in every form, and the parts a
 * client would connect to. Clients assume http:// when no scheme is given (curl, requests, undici alike).
 */
import { MASK, maskText } from "@roadnerd/conventions";

const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;

export interface ProxyTarget {
  scheme: string;
  host: string;
  port: number;
  /** The value carried a user name or password. */
  credentials: boolean;
  username: string;
  password: string;
}

/** The value with its userinfo (anything before the last @ of the authority) masked; other secrets too. */
export function maskProxyValue(value: string): string {
  const scheme = SCHEME.exec(value)?.[0] ?? "";
  let rest = value.slice(scheme.length);
  // A password may hold / ? or # unescaped (`alice:a#b/c@proxy`): everything up to the last @ is userinfo,
  // wherever a URL parser would have ended the authority. A proxy address has no @ of its own.
  const at = rest.lastIndexOf("@");
  const userinfo = at === -1 ? "" : `${MASK}@`;
  rest = rest.slice(at + 1);
  const authorityEnd = rest.search(/[/?#]/);
  const authority = authorityEnd === -1 ? rest : rest.slice(0, authorityEnd);
  const tail = authorityEnd === -1 ? "" : rest.slice(authorityEnd);
  return `${scheme}${userinfo}${authority}${maskText(tail)}`;
}

/** Parse a proxy value as clients do (http:// assumed); null when it is not a usable proxy address. */
export function parseProxyValue(value: string): ProxyTarget | null {
  const trimmed = value.trim();
  if (trimmed === "") return null;
  const withScheme = SCHEME.test(trimmed) ? trimmed : `http://${trimmed}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return null;
  }
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (url.hostname === "") return null;
  const defaultPort = scheme === "https" ? 443 : scheme.startsWith("socks") ? 1080 : 80;
  return {
    scheme,
    host: url.hostname.replace(/^\[|\]$/g, ""),
    port: url.port ? Number(url.port) : defaultPort,
    credentials: url.username !== "" || url.password !== "",
    username: decodeOr(url.username),
    password: decodeOr(url.password),
  };
}

/** A percent-escape that does not decode (`s3cret%PW`) is kept as written: it is a value to mask, not an error. */
function decodeOr(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
