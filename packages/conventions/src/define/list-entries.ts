/**
 * What ALLOWED_ORIGINS and ALLOWED_HOSTS may list. Both are matched exactly (an Origin as the browser sends it,
 * a Host's name), so a pattern such as `https://*.corp.example` or `*` matched nothing while it looked like it
 * opened a whole domain; it is refused at start instead, naming the entry and what is accepted (ADR 0048).
 */
import { ipFamily } from "./fields.ts";

/** A host as browsers put it in an Origin or Host: a name (punycode, lower case) or an IP literal. */
const HOST_NAME = /^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?$/;

/**
 * An Origin exactly as a browser serializes it: lower-case scheme, canonical host (`127.1` and `2130706433` are
 * 127.0.0.1 written otherwise), the port only when not the scheme's default, no userinfo, path or trailing `/`.
 * A scheme with no URL origin (an extension's: `chrome-extension://id`) in that shape.
 */
export function isSerializedOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    if (url.protocol === "http:" || url.protocol === "https:") return url.origin === origin;
    return /^[a-z][a-z0-9+.-]*:\/\/[a-z0-9.-]+$/.test(origin);
  } catch {
    return false;
  }
}

const ORIGIN_SHAPE = "an origin exactly as a browser sends it: scheme://host[:port], e.g. https://app.corp.example";
const HOST_SHAPE = "a name or address exactly as clients send it in Host, e.g. diag.corp.example or 10.0.0.5";

/** Why an ALLOWED_ORIGINS entry can never match a browser's Origin, or undefined when it can. */
export function originEntryProblem(entry: string): string | undefined {
  const shown = JSON.stringify(entry.slice(0, 120));
  if (entry.includes("*")) {
    return `${shown}: wildcards are not supported; list each origin, ${ORIGIN_SHAPE}`;
  }
  let url: URL | undefined;
  try {
    url = new URL(entry);
  } catch {
    url = undefined;
  }
  const web = url?.protocol === "http:" || url?.protocol === "https:";
  const hostOk = url !== undefined && (HOST_NAME.test(url.hostname) || /^\[[0-9a-f:.]+\]$/.test(url.hostname));
  if (isSerializedOrigin(entry) && (!web || hostOk)) return undefined;
  // A near miss (a trailing /, a path, upper case, a default port): the form that would match.
  const near = web && hostOk && url ? `; did you mean ${url.origin}?` : "";
  return `${shown} is not ${ORIGIN_SHAPE} (no path, trailing /, userinfo or default port)${near}`;
}

/** Why an ALLOWED_HOSTS entry can never match a Host header's name, or undefined when it can. */
export function hostEntryProblem(entry: string): string | undefined {
  const shown = JSON.stringify(entry.slice(0, 120));
  const name = entry.toLowerCase();
  if (name.includes("*")) return `${shown}: wildcards are not supported; list each name, ${HOST_SHAPE}`;
  if (HOST_NAME.test(name) || ipFamily(name) !== 0) return undefined;
  const bracketed = /^\[([0-9a-f:.]+)\]$/.exec(name);
  const near = bracketed?.[1] && ipFamily(bracketed[1]) === 6 ? `; did you mean ${bracketed[1]}?` : "";
  return `${shown} is not ${HOST_SHAPE} (no scheme, port or path)${near}`;
}
