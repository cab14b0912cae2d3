/** Secret masking for everything we echo or log: headers, URLs, free text. */
import { cutText } from "../define/limits.ts";

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
  return (
    text
      .replace(/\b(Bearer|Basic|Digest|Token)\s+[A-Za-z0-9._~+/=-]+/gi, `$1 ${MASK}`)
      .replace(
        /\b([A-Za-z0-9_.-]*(?:token|secret|password|passwd|pass|pwd|api[_-]?key|apikey|session|sessid|sid|auth|signature|sig|key))=([^\s&;,]+)/gi,
        `$1=${MASK}`,
      )
      // The same names as JSON (`"password":"x"`) or as a header-style line (`x-api-key: x`, `secret: x`).
      .replace(
        /("[A-Za-z0-9_.-]*(?:token|secret|password|passwd|pass|pwd|api[_-]?key|apikey|auth|credential)[A-Za-z0-9_.-]*"\s*:\s*)"[^"]*"/gi,
        `$1"${MASK}"`,
      )
      .replace(
        /\b([A-Za-z0-9_.-]*(?:token|secret|password|passwd|pwd|api[_-]?key|apikey):\s*)(?!\/\/)([^\s"',;]+)/gi,
        `$1${MASK}`,
      )
      .replace(JWT, MASK)
  );
}

/** An option or variable name whose value is a secret: --password=…, DB_PASSWORD=…, -Dtrust.keyStorePassword=… */
const SECRET_ARG_NAME = new RegExp(`${SECRET_NAME.source}|(pass|pwd|key)$`, "i");
/** A flag whose NEXT argument is the secret (`--password hunter2`): only names that end in the secret word. */
const SECRET_FLAG =
  /^--?[A-Za-z0-9_.-]*(password|passwd|passphrase|pass|pwd|secret|token|api[-_]?key|apikey|credentials?|auth)$/i;
/** Userinfo in any URL inside an argument: scheme://user:pass@ → scheme://[masked]@ */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/@\s?#]+@/gi;
/**
 * Programs whose short options carry a password, where `-p` is not a port: `-p` glued to its value for the
 * MySQL clients (`-psecret`; a bare `-p` prompts), the next argument for sshpass and redis-cli.
 */
const SHORT_SECRET: Record<string, { glued?: string; next?: string }> = {
  mysql: { glued: "-p" },
  mysqldump: { glued: "-p" },
  mysqladmin: { glued: "-p" },
  mariadb: { glued: "-p" },
  "mariadb-dump": { glued: "-p" },
  sshpass: { next: "-p" },
  "redis-cli": { next: "-a" },
};

/**
 * Mask the secrets in a process's argv: `--password=…` and `NAME=…` with a secret-looking name, the argument
 * after `--password`/`--token`…, `-p…` only for programs where it is a password, URL userinfo, and whatever
 * maskText finds (bearer tokens, JWTs, `token=` inside a value).
 */
export function maskArgv(argv: readonly string[]): string[] {
  const program = (argv[0] ?? "").split("/").pop() ?? "";
  const short = SHORT_SECRET[program];
  const out: string[] = [];
  let maskNext = false;
  for (const arg of argv) {
    if (maskNext && !arg.startsWith("-")) {
      out.push(MASK);
      maskNext = false;
      continue;
    }
    maskNext = false;
    if (out.length > 0 && (SECRET_FLAG.test(arg) || arg === short?.next)) {
      out.push(arg);
      maskNext = true;
      continue;
    }
    if (short?.glued && arg.startsWith(short.glued) && arg.length > short.glued.length && !arg.startsWith("--")) {
      out.push(`${short.glued}${MASK}`);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq > 0 ? arg.slice(0, eq) : "";
    if (name && !name.includes("://") && SECRET_ARG_NAME.test(name.replace(/^-+D?/, ""))) {
      out.push(`${name}=${MASK}`);
      continue;
    }
    out.push(maskText(arg.replace(URL_USERINFO, `$1${MASK}@`)));
  }
  return out;
}

/**
 * A command line as we show it: argv (or a line already joined by spaces) with secrets masked, joined by
 * spaces. Cut it after masking (a cut before could leave half a secret unmasked).
 */
export function maskCommandLine(argv: readonly string[] | string): string {
  const args = typeof argv === "string" ? argv.split(/\s+/).filter(Boolean) : argv;
  return maskArgv(args).join(" ");
}
