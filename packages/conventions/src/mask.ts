/** Secret masking for everything we echo or log: headers, URLs, free text. */

export const MASK = "[masked]";

const SECRET_HEADER =
  /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key|x-auth-token|x-csrf-token|x-amz-security-token)$/i;
const SECRET_NAME = /(token|secret|passw(or)?d|api[-_]?key|session|auth|credential|signature|sig)$/i;

export function isSecretHeader(name: string): boolean {
  return SECRET_HEADER.test(name) || SECRET_NAME.test(name);
}

/** Headers whose value holds a URL: an OAuth redirect's `?code=` or `#access_token=` must not be echoed. */
const URL_HEADER = /^(location|content-location|refresh|link)$/i;

/** Copy headers with secret values masked (URL-bearing ones through maskUrl); multi-valued headers joined. */
export function maskHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const joined = Array.isArray(value) ? value.join(", ") : value;
    out[name.toLowerCase()] = isSecretHeader(name) ? MASK : URL_HEADER.test(name) ? maskUrlsIn(joined) : joined;
  }
  return out;
}

/** Every absolute URL inside a header value (Refresh: 0; url=…, Link: <…>; rel=…) masked in place. */
function maskUrlsIn(value: string): string {
  return value.replace(/https?:\/\/[^\s<>"',;]+/gi, (u) => maskUrl(u));
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

/** Mask bearer tokens and key=value secrets inside free text. */
export function maskText(text: string): string {
  return text
    .replace(/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, `$1 ${MASK}`)
    .replace(/\b([A-Za-z_-]*(?:token|secret|password|passwd|api[_-]?key))=([^\s&;]+)/gi, `$1=${MASK}`);
}
