/** Secret masking for everything we echo or log: headers, URLs, free text. */
import { cutText } from "./limits.ts";

export const MASK = "[masked]";

const SECRET_HEADER =
  /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key|x-auth-token|x-csrf-token|x-amz-security-token)$/i;
/** A name that says its value is a secret, wherever the word sits: x-session-id, x-goog-api-key, csrftoken… */
const SECRET_NAME =
  /(token|secret|passw(or)?d|passphrase|api[-_]?key|apikey|session|sessid|auth|credential|signature|cookie|csrf|xsrf|jwt|bearer|private[-_]?key|(^|[-_])sig$|(^|[-_])sid$)/i;

export function isSecretHeader(name: string): boolean {
  return SECRET_HEADER.test(name) || SECRET_NAME.test(name);
}

/** WWW-Authenticate and Proxy-Authenticate say which scheme is wanted; they carry no credential. */
const CHALLENGE = /^(www|proxy)-authenticate$/i;

/** Headers whose value holds a URL: an OAuth redirect's `?code=` or `#access_token=` must not be echoed. */
const URL_HEADER = /^(location|content-location|refresh|link)$/i;

/**
 * Copy headers with secrets masked: a secret-named header whole, a URL-bearing one through maskUrl, and in
 * every other value whatever looks like a secret (token=…, Bearer …, a JWT). Multi-valued headers joined.
 */
export function maskHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const joined = Array.isArray(value) ? value.join(", ") : value;
    // A challenge names the scheme a server wants: diagnostic, not a secret (a token in it still is).
    if (CHALLENGE.test(name)) {
      out[name.toLowerCase()] = joined.replace(JWT, MASK);
      continue;
    }
    out[name.toLowerCase()] = isSecretHeader(name)
      ? MASK
      : URL_HEADER.test(name)
        ? maskUrlsIn(maskText(joined))
        : maskText(joined);
  }
  return out;
}

/** Every absolute URL inside a header value (Refresh: 0; url=…, Link: <…>; rel=…) masked in place. */
function maskUrlsIn(value: string): string {
  return value.replace(/https?:\/\/[^\s<>"',;]+/gi, (u) => maskUrl(u));
}

/** A URL as a result shows it: masked, then cut to `max` characters. */
export function shownUrl(raw: string, max = 300): string {
  return cutText(maskUrl(raw), max);
}

/** Mask userinfo and secret-looking query parameters in a URL; non-URLs pass through maskText. */
export function maskUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return maskText(raw);
  }
  if (url.username) url.username = MASK;
  if (url.password) url.password = MASK;
  for (const key of [...url.searchParams.keys()]) {
    if (SECRET_NAME.test(key) || /^(code|key|access_token|id_token)$/i.test(key)) url.searchParams.set(key, MASK);
  }
  // Implicit-flow tokens travel in the fragment.
  if (/(access_token|id_token|code)=/i.test(url.hash)) url.hash = `#${MASK}`;
  return url.toString();
}

const JWT = /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;

/** Mask bearer and basic credentials, key=value secrets and JWTs inside free text. */
export function maskText(text: string): string {
  return text
    .replace(/\b(Bearer|Basic|Digest|Token)\s+[A-Za-z0-9._~+/=-]+/gi, `$1 ${MASK}`)
    .replace(
      /\b([A-Za-z0-9_.-]*(?:token|secret|password|passwd|pass|pwd|api[_-]?key|apikey|session|sessid|sid|auth|signature|sig|key))=([^\s&;,]+)/gi,
      `$1=${MASK}`,
    )
    .replace(JWT, MASK);
}
