/** Secret masking for everything we echo or log: headers, URLs, free text. */
import { cutText } from "../define/limits.ts";
import { MASK, maskCommandWords, programOf, RULED_PROGRAMS } from "./mask-commands.ts";

export { MASK };

/**
 * A name says its value is a secret when one of its parts (split at `-`, `_`, `.` and camelCase) is one of these
 * words, or starts or ends with one as the word allows: x-access-key, X-Accesskey, x-pwd, x-session-id,
 * csrftoken… A rule, not a list of headers, so a header nobody listed is masked the day a server sends it. Whole
 * parts, not substrings: `X-Keyboard`, `X-Author`, `X-Passive` hold no secret.
 */
const SECRET_PART =
  /^(?:\w*(?:token|secret|session|sessid|cookie|credentials?|signature|csrf|xsrf|jwt|bearer|passwd|password|passphrase|passcode|key|pass|pwd|auth)|(?:token|secret|session|sessid|cookie|credential|signature|csrf|xsrf|jwt|bearer|passwd|password|passphrase|passcode)\w*|auth(?:orization|entication|n|z|token|key|code|info))$/i;
const SECRET_WHOLE_PART = /^(sig|sid|pw|psk|creds?|otp|totp|oidc|mfa)$/i;
/** Whole names whose parts say nothing alone (`X-JFrog-Art-Api` is Artifactory's API key). */
const SECRET_WHOLE_NAME = /^x-jfrog-art-api$/i;
/** Names that hold such a word and no secret: CORS's answers (`Access-Control-Allow-Credentials: true`). */
const NOT_SECRET_NAME = /^access-control-/i;

export function isSecretHeader(name: string): boolean {
  if (NOT_SECRET_NAME.test(name) || CHALLENGE.test(name)) return false;
  if (SECRET_WHOLE_NAME.test(name)) return true;
  return name
    .split(/[-_.\s]+|(?<=[a-z])(?=[A-Z])/)
    .some((part) => SECRET_PART.test(part) || SECRET_WHOLE_PART.test(part));
}

/** The name rule for query parameters and `NAME=value` words: narrower than the header names' (`key`, `pass`). */
const SECRET_NAME =
  /(token|secret|passw(or)?d|passphrase|api[-_]?key|apikey|session|sessid|auth(?!or)|credential|signature|cookie|csrf|xsrf|jwt|bearer|private[-_]?key|(^|[-_])sig$|(^|[-_])sid$)/i;

/** WWW-Authenticate and Proxy-Authenticate say which scheme is wanted; they carry no credential. */
const CHALLENGE = /^(www|proxy)-authenticate$/i;

/** A challenge's parameter that carries a credential (`Bearer realm="x", token=X`); realm and scope stay. */
const CHALLENGE_SECRET =
  /\b((?:[\w-]{0,128}token|code|key|secret|password|signature|sig)=)(?!\[masked\])("[^"]*"|[^\s,;]+)/gi;

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
      out[name.toLowerCase()] = joined.replace(JWT, MASK).replace(CHALLENGE_SECRET, `$1${MASK}`);
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

/**
 * Every absolute URL inside a header value (Refresh: 0; url=…, Link: <…>; rel=…) masked in place; a URL with
 * nothing to mask is left exactly as it was (the parser's normal form would add a `/` to `<https://x>`).
 */
function maskUrlsIn(value: string): string {
  return value.replace(/https?:\/\/[^\s<>"',;]+/gi, (u) => {
    const masked = maskUrl(u);
    return masked.includes(MASK) || masked.includes(encodeURIComponent(MASK)) ? masked : u;
  });
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
  // `alice:pw@proxy:3128` parses as scheme `alice:` with an opaque path: it is text, not a URL.
  if (url.host === "" && !raw.includes("://")) return maskText(raw);
  if (url.username) url.username = MASK;
  if (url.password) url.password = MASK;
  for (const [key, value] of [...url.searchParams.entries()]) {
    // `code` is an OAuth code, unless it is a status (`?code=302`): a few digits are kept readable.
    if (/^code$/i.test(key) && /^\d{1,3}$/.test(value)) continue;
    if (SECRET_NAME.test(key) || /^(code|key|access_token|id_token)$/i.test(key)) url.searchParams.set(key, MASK);
  }
  // Implicit-flow tokens travel in the fragment.
  if (/(access_token|id_token|code)=/i.test(url.hash)) url.hash = `#${MASK}`;
  return url.toString();
}

const JWT = /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;

/**
 * Userinfo in a URL anywhere in a text: the user (no / ? # @), then an optional password that may hold any of
 * those but spaces (`https://svc:a/b#c@host`), and @ too when another @ follows before any `/`
 * (`https://bob:p@ss@host`), then the @. A path with an @ further on is left alone. Each part is at most 256
 * characters, so a long line of `a://` costs linear time, not quadratic.
 */
const TEXT_USERINFO =
  /\b([a-z][a-z0-9+.-]{0,32}:\/\/)[^\s/?#@:]{0,256}(?::[^\s@]{0,256}(?:@[^\s@/?#]{0,256}(?=@))*)?@/gi;
/**
 * `user:password@host` with no scheme (a proxy setting as often written): the password, up to the @. The user
 * starts a word (after a space, a quote, a bracket, `=`, `,`, `;`, `|`) and holds none of those, and a password
 * is at most 256 characters, so a long line of `a;b:` costs linear time, not quadratic.
 */
const BARE_USERINFO = /(?<=^|[\s"'`=(<[{,;|])([^\s:/@"'`=(<[{,;|]+):(?!\/\/|\[masked\])[^\s@]{1,256}@(?=[A-Za-z0-9[])/g;
/** A PEM private key: its body masked, to its END line or to the end of a text cut before it. */
const PEM_KEY = /(-----BEGIN [A-Z ]*PRIVATE KEY-----)[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g;
/** Providers' tokens, recognisable by their prefix whatever surrounds them. */
const PROVIDER_TOKEN =
  /\b(gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}|xox[abposre]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{35}|npm_[A-Za-z0-9]{36}|sk-[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{30,}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|dop_v1_[a-f0-9]{40,}|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}|hvs\.[A-Za-z0-9_-]{20,}|glsa_[A-Za-z0-9]{20,}_[A-Fa-f0-9]{8}|dckr_pat_[A-Za-z0-9_-]{20,}|pypi-Ag[A-Za-z0-9_-]{20,}|shp(?:at|ss|ca|pa)_[A-Fa-f0-9]{32}|xapp-\d-[A-Za-z0-9-]{20,})/g;
/** Webhook URLs whose path is the credential (Slack, Discord): the path after the fixed part. */
const WEBHOOK_URL =
  /(https?:\/\/(?:hooks\.slack\.com\/(?:services|workflows|triggers)\/|(?:ptb\.|canary\.)?discord(?:app)?\.com\/api\/webhooks\/\d+\/))(?!\[masked\])[^\s"'<>?#]+/gi;
/** An AWS access key id followed by its secret (`AKIA… wJalr…`): the secret, whatever its length. */
const AWS_KEY_PAIR = /\b((?:AKIA|ASIA)[A-Z0-9]{16}[\s:,=/]+)(?!\[masked\])[A-Za-z0-9/+]{20,}/g;
/** An AWS secret access key alone: 40 characters of base64 with a / or + and mixed case and digits. */
const AWS_SECRET =
  /(?<![A-Za-z0-9/+=])(?=[A-Za-z0-9/+]{0,39}[/+])(?=[A-Za-z0-9/+]{0,39}[0-9])(?=[A-Za-z0-9/+]{0,39}[a-z])(?=[A-Za-z0-9/+]{0,39}[A-Z])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g;
/**
 * A flag whose next word is a secret, in a line of text (`--password PW`, `-passin pass:PW`, `--bind-pw PW`). The
 * value may start with `-` (`--password -x`: getopt takes it as the value), not `--` (`--password --verbose`);
 * `--password -- PW` masks the word after the `--`.
 */
const TEXT_SECRET_FLAG =
  /((?:^|\s)--?[A-Za-z0-9_.-]*(?:password|passwd|passphrase|pwd|pw|psk|creds|secret|token|bearer|(?:api|auth|access|private|client|license|shared|signing|encryption|hmac)[-_]?key|apikey|(?<=[-_])(?:jwt|cookie|sas|otp|pin|sid))\s+(?:--\s+)?)(?!--|\[masked\])\S+/gi;
/** The same, for flags that take no value (`--password-stdin`): a word after it is hidden unless an option. */
const TEXT_STDIN_FLAG = /((?:^|\s)--?[A-Za-z0-9_.-]*(?:password|passwd|passphrase|secret|token)[-_]stdin\s+)(?!-)\S+/gi;
/**
 * `--key X` / `-key X`: usually a key file's path (`openssl req -key host.key`, `--key /etc/tls/x.pem`), which
 * stays readable; a value with no `/` and no .pem/.key/.p12/.pfx/.der suffix is taken for the key itself.
 */
const TEXT_KEY_FLAG = /((?:^|\s)--?key\s+)(?!-)(?![^\s]*\/)(?![^\s]*\.(?:pem|key|p12|pfx|der)(?:\s|$))\S+/gi;
/** A `--key` value that names a file rather than holding the key (see TEXT_KEY_FLAG). */
const KEY_PATH = /\/|\.(?:pem|key|p12|pfx|der)$/i;
/** Forms of any program: Samba's `-U user%PW`, openssl's `pass:PW`, `aws_secret_access_key PW` in a config line. */
const TEXT_ANY_PROGRAM: ReadonlyArray<[RegExp, string]> = [
  [/((?:\s-U\s*|--user=)[^\s%]+%)\S+/g, `$1${MASK}`],
  [/\b(pass:)(?!\[masked\])\S+/g, `$1${MASK}`],
  [/(\baws_(?:secret_access_key|session_token)\s+)(?!=)\S+/gi, `$1${MASK}`],
  // PHP's `new PDO(dsn, user, password)` and `mysqli_connect(host, user, password)`: the third argument.
  [
    /(\b(?:PDO|mysqli(?:_connect)?)\s*\(\s*(["'])[^"'\n]*\2\s*,\s*(["'])[^"'\n]*\3\s*,\s*)(["'])(?!\[masked\])[^"'\n]*\4/g,
    `$1$4${MASK}$4`,
  ],
];

/**
 * `-u user:pw`, `--user user:pw`, `--auth user:pw` for any program (wget, httpie, sync tools… not only curl):
 * the password goes, the user stays. `1000:1000` (docker's uid:gid) is left alone.
 */
const TEXT_USER_PASSWORD = /((?:^|\s)(?:-u|--user|--auth)[\s=]+)([^\s:]+):(?!\[masked\])(\S+)/g;

function maskUserPassword(text: string): string {
  return text.replace(TEXT_USER_PASSWORD, (all, flag: string, user: string, password: string) =>
    /^\d+$/.test(user) && /^\d+$/.test(password) ? all : `${flag}${user}:${MASK}`,
  );
}

/** A program the command table knows, as a word of a text (after a space, a quote, `=`, a `/` of its path). */
const PROGRAM_WORD = new RegExp(
  `(?<=^|[\\s"'\`(=/;|&])(?:${RULED_PROGRAMS.map((p) => p.replace(/[.+-]/g, "\\$&")).join("|")})(?=[ \\t]+\\S)`,
  "g",
);
/**
 * The words after a program named inside a text or an argv its rule reads (to the end of the line, at most 64):
 * a line of thousands of program names costs each one its window, not the rest of the line (a journal line and
 * a process's argv are anyone's to write).
 */
const COMMAND_WINDOW_WORDS = 64;
const COMMAND_WINDOW = new RegExp(`(?:[^\\S\\n]+\\S+){1,${COMMAND_WINDOW_WORDS}}`, "y");
/**
 * Quotes and brackets that close a word in a text (`"mysql -pX"`): kept when the word is masked. The `]` of a
 * word already masked is its own (a second pass over `-p[masked]` must not show `-p[masked]]`).
 */
const WORD_END = /(?<!\[masked)["'`)\],;]+$/;

/**
 * A command line inside a text (`backup[31]: running mysqldump -uroot -pX app`): the words after each program
 * the table knows, to the end of the line, masked by its rule. A program inside another's words (`sudo mysql`,
 * `docker exec db mysql`) gets its own rule too.
 */
function maskCommandsIn(text: string): string {
  let out = text;
  PROGRAM_WORD.lastIndex = 0;
  // Each round moves past one program word: at most one round per character.
  for (let m = PROGRAM_WORD.exec(out); m !== null; m = PROGRAM_WORD.exec(out)) {
    const from = m.index + m[0].length;
    COMMAND_WINDOW.lastIndex = from;
    const stop = from + (COMMAND_WINDOW.exec(out)?.[0].length ?? 0);
    const parts = out.slice(from, stop).split(/(\s+)/);
    const ends = parts.map((p) => WORD_END.exec(p)?.[0] ?? "");
    const words = parts.map((p, k) => p.slice(0, p.length - (ends[k]?.length ?? 0)));
    const argv = [m[0], ...words.filter((_, k) => k % 2 === 0).slice(1)];
    const masked = maskCommandWords(argv);
    if (masked.every((word, k) => word === argv[k])) {
      PROGRAM_WORD.lastIndex = from;
      continue;
    }
    let w = 1;
    const rebuilt = parts.map((p, k) => {
      if (k % 2 === 1 || k === 0) return p;
      const shown = masked[w] ?? "";
      w += 1;
      return shown === argv[w - 1] ? p : `${shown}${ends[k] ?? ""}`;
    });
    out = `${out.slice(0, from)}${rebuilt.join("")}${out.slice(stop)}`;
    PROGRAM_WORD.lastIndex = from;
  }
  return out;
}

/** Header-style lines in a text (`X-Pass: PW`, `Authorization: …`, `-H "X-Key: PW"`) whose name is a secret's. */
const HEADER_LINE = /(^|[\s"'([{,])(X-[A-Za-z0-9-]+|(?:Proxy-)?Authorization|Cookie|Set-Cookie)(\s*:\s*)([^\n]+)/gi;

function maskHeaderLines(text: string): string {
  return text.replace(HEADER_LINE, (all, open: string, name: string, colon: string, rest: string) => {
    if (!isSecretHeader(name) || rest.startsWith(MASK)) return all;
    // Inside quotes (`-H "X-Key: PW"`), the value ends at the closing quote.
    const close = open === '"' || open === "'" ? rest.indexOf(open) : -1;
    const value = close >= 0 ? rest.slice(0, close) : rest;
    const after = rest.slice(value.length);
    // A one-word credential after its scheme (`Bearer X`); a Digest's parameters, a bare credential and cookies
    // run to the end of the value (`Digest username="bob", response="…"`); any other value is one word.
    const scheme = /^(Bearer|Basic|Token|Negotiate)\s+/i.exec(value)?.[0];
    if (scheme) {
      const credential = /^("[^"]*"|'[^']*'|\S+)/.exec(value.slice(scheme.length))?.[0] ?? "";
      return `${open}${name}${colon}${scheme}${MASK}${value.slice(scheme.length + credential.length)}${after}`;
    }
    if (/auth|cookie/i.test(name)) return `${open}${name}${colon}${MASK}${after}`;
    const word = /^("[^"]*"|'[^']*'|\S+)/.exec(value)?.[0] ?? "";
    return `${open}${name}${colon}${MASK}${value.slice(word.length)}${after}`;
  });
}

/** `name = value` where the name says secret; a quoted value whole, a bare one up to a separator (`&;,<>`). */
const KEY_EQUALS =
  /\b([A-Za-z0-9_.-]{0,128}(?:token|secret|password|passwd|passphrase|pass|pwd|pw|psk|credentials?|api[_-]?key|apikey|session|sessid|sid|auth|signature|sig|key))(\s*=(?!=)\s*|%3D)(?!\[masked\])("[^"\n]*"|'[^'\n]*'|(?:(?!%26)[^\s&;,<>"'])+)/gi;
/** The same names as JSON or a dict (`"password": "x"`, `'api_key': 'x'`). */
const QUOTED_KEY =
  /((["'])[A-Za-z0-9_.-]*(?:token|secret|password|passwd|pass|pwd|api[_-]?key|apikey|access[_-]?key|auth|credential)[A-Za-z0-9_.-]*\2\s*:\s*)(["'])(?:(?!\3)[^\\\n]|\\.)*\3/gi;
/** A `name: value` line (`secret: x`, `api_key: "x"`), the value bare or quoted; `scheme://` is not a value. */
const KEY_COLON =
  /\b([A-Za-z0-9_.-]{0,128}(?:token|secret|password|passwd|passphrase|pwd|(?<![A-Za-z])pw|psk|credentials?|api[_-]?key|apikey|access[_-]?key|client[_-]?key|private[_-]?key(?:[_-]id)?)\s*:\s*)(?!\/\/|\[masked\])("[^"\n]*"|'[^'\n]*'|[^\s"',;]+)/gi;
/** Prose: a secret word, then a quoted value (`with password 'x'`, `password is "x"`). */
const PROSE_QUOTED =
  /\b(password|passphrase|passwd|pwd|secret|token|api[ _-]?key|psk|pin)(\s+(?:for\s+[\w@.-]+\s+)?(?:is|was|of|set to|is now|now)?\s*[:=]?\s*)(["'‘“])(?!\[masked\])[^"'’”\n]+(["'’”])/gi;
/** Words after "password is" that say how it is, not what it is. */
const NOT_A_VALUE =
  "incorrect|invalid|wrong|expired|expiring|required|empty|missing|not|too|correct|valid|ok|okay|disabled|enabled|locked|unchanged|changed|weak|strong|a|an|the|being|about|due|null|none|set|reset|needed|accepted|rejected|denied|unknown|unset|blank|stored|saved|updated|used|in|on|from|for|to|also|still|never|always|already|hidden|redacted|masked|same|different|short|long|entered|given|supplied|provided|attempt|attempts|length|policy|hash|file|prompt|change|expiry|request|requested|generated|sent";
/** Prose: `password is X`, `token was X`: the value unless it is a word like "incorrect". */
const PROSE_IS = new RegExp(
  `\\b(password|passphrase|passwd|secret|token|psk)(\\s+(?:is|was)(?:\\s+(?:now|set\\s+to))?\\s+)(?!(?:${NOT_A_VALUE})\\b)(?!\\[masked\\])([^\\s,;]+?)(?=[.,;]?(?:\\s|$))`,
  "gi",
);
/**
 * An authorization scheme and its credential (`Bearer X`, `Basic X`, `Bearer "X"`, `Bearer%20X`): the credential
 * has a digit or a symbol of a token, or is long (so "Bearer token missing" stays).
 */
const SCHEME_CREDENTIAL =
  /\b(Bearer|Basic|Digest|Token|Negotiate)(\s+|%20|\+)(["']?)(?!\[masked\])(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-]|[A-Za-z0-9._~+/=-]{12})[A-Za-z0-9._~+/=%-]+/gi;

/** An XML element named for a secret (`<password>X</password>`, `<ApiKey>X</ApiKey>`): its text. */
const XML_SECRET =
  /(<([A-Za-z_.:-]*(?:password|passwd|passphrase|secret|token|api[-_]?key|apikey|psk)[A-Za-z_.:-]*)(?:\s[^<>]*)?>)(?!\[masked\])[^<\n]+(<\/\2>)/gi;
/** A secret word then a tab (`password<TAB> X`, a config file's columns): the next word. */
const TAB_VALUE = /\b(password|passwd|passphrase|secret|psk|apikey)(\t[ \t]*)(?!\[masked\])\S+/gi;
/** Prose naming a password by what happened to it (`invalid password X for user bob`, `set new password X`). */
const PROSE_ADJECTIVE = new RegExp(
  `\\b((?:invalid|wrong|incorrect|bad|new|old|temporary|initial)\\s+(?:password|passphrase|pin|token)\\s+)(?!(?:${NOT_A_VALUE})\\b)(?!\\[masked\\])[^\\s,;]+`,
  "gi",
);
/** `passphrase X accepted`, `apikey X`: a value with a digit or a symbol, or long, after the bare word. */
const PROSE_BARE = /\b(passphrase|apikey|api[-_]key)(\s+)(?!\[masked\])(?=[^\s,;]*[0-9_+/=.-]|[^\s,;]{12})[^\s,;]+/gi;
/** `decrypting with key X`: a key given in prose; a path or a key id stays. */
const PROSE_KEY =
  /\b((?:with|using)\s+(?:the\s+)?key\s+)(?!(?:id|ID|file|for|from|in|of|to)\b)(?![^\s]*\/)(?!\[masked\])[^\s,;]+/g;
/** `credentials: bob/X`, `login bob/X failed`: the user stays, the password goes. */
const USER_SLASH_PASSWORD = /\b((?:login|credentials?)\s*:?\s+[\w.@-]+\/)(?!\[masked\])[^\s,;/]+/gi;
/** A one-time code (`2FA code: X`, `OTP X`, `verification code X`): a value holding a digit. */
const ONE_TIME_CODE =
  /\b((?:otp|totp|hotp|(?:2fa|mfa|verification|one-time|security|auth)\s+code)\s*[:=]?\s+)(?=[^\s,;]*\d)(?!\[masked\])[^\s,;]+/gi;
/** An OAuth code in a query inside a text (`GET /cb?code=X&state=…`); a status (`?code=302`) stays. */
const QUERY_CODE = /([?&]code=)(?!\d{1,3}(?:[&\s#]|$))(?!\[masked\])[^\s&#"'<>]+/gi;

/** A bare `user:password` word in a text (BARE_USER_PASSWORD, the same rule as in argv). */
const TEXT_BARE_USER_PASSWORD =
  /(?<=^|\s)([A-Za-z][A-Za-z_-]*):(?=[^\s:@/=]*[0-9])(?=[^\s:@/=]*[A-Za-z])([^\s:@/=]+)(?=\s|$)/g;

function maskBareUserPassword(text: string): string {
  return text.replace(TEXT_BARE_USER_PASSWORD, (all, user: string, value: string) =>
    VERSION_LIKE.test(value) || value === MASK ? all : `${user}:${MASK}`,
  );
}

/** Mask bearer and basic credentials, key=value secrets, URL userinfo, keys, tokens and JWTs inside free text. */
export function maskText(text: string): string {
  let out = text
    .replace(PEM_KEY, `$1${MASK}$2`)
    .replace(TEXT_USERINFO, `$1${MASK}@`)
    .replace(BARE_USERINFO, `$1:${MASK}@`)
    .replace(WEBHOOK_URL, `$1${MASK}`);
  out = maskCommandsIn(out);
  for (const [form, masked] of TEXT_ANY_PROGRAM) out = out.replace(form, masked);
  out = maskHeaderLines(maskUserPassword(maskBareUserPassword(out)));
  return out
    .replace(TEXT_STDIN_FLAG, `$1${MASK}`)
    .replace(TEXT_SECRET_FLAG, `$1${MASK}`)
    .replace(TEXT_KEY_FLAG, `$1${MASK}`)
    .replace(SCHEME_CREDENTIAL, `$1$2$3${MASK}`)
    .replace(KEY_EQUALS, `$1$2${MASK}`)
    .replace(QUOTED_KEY, `$1$3${MASK}$3`)
    .replace(KEY_COLON, `$1${MASK}`)
    .replace(PROSE_QUOTED, `$1$2$3${MASK}$4`)
    .replace(PROSE_IS, `$1$2${MASK}`)
    .replace(XML_SECRET, `$1${MASK}$3`)
    .replace(TAB_VALUE, `$1$2${MASK}`)
    .replace(PROSE_ADJECTIVE, `$1${MASK}`)
    .replace(PROSE_BARE, `$1$2${MASK}`)
    .replace(PROSE_KEY, `$1${MASK}`)
    .replace(USER_SLASH_PASSWORD, `$1${MASK}`)
    .replace(ONE_TIME_CODE, `$1${MASK}`)
    .replace(QUERY_CODE, `$1${MASK}`)
    .replace(AWS_KEY_PAIR, `$1${MASK}`)
    .replace(JWT, MASK)
    .replace(PROVIDER_TOKEN, MASK)
    .replace(AWS_SECRET, MASK);
}

/** An option or variable name whose value is a secret: --password=…, DB_PASSWORD=…, -Dtrust.keyStorePassword=… */
const SECRET_ARG_NAME = new RegExp(`${SECRET_NAME.source}|(pass|pwd|pw|psk|creds|key)$`, "i");
/** A flag whose NEXT argument is the secret (`--password hunter2`): only names that end in the secret word. */
const SECRET_FLAG =
  /^--?[A-Za-z0-9_.-]*(password|passwd|passphrase|pass|pwd|pw|psk|creds|secret|token|bearer|(?:api|auth|access|secret|private|client|license|shared|signing|encryption|hmac)[-_]?key|apikey|credentials?|auth|(?<=[-_])(?:jwt|cookie|sas|otp|pin|sid))$/i;
/** A flag that takes no value (`--password-stdin`): a word after it is hidden unless it is an option. */
const STDIN_FLAG = /^--?[A-Za-z0-9_.-]*(password|passwd|passphrase|pass|secret|token)[-_]stdin$/i;
/** `--key`/`-key`: its next argument is masked unless it names a file (KEY_PATH). */
const KEY_FLAG = /^--?key$/i;
/**
 * openssl's pass phrase options (`-pass`, `-passin`, `-passout`): `env:VAR`, `file:PATH`, `fd:N` and `stdin` say
 * where the secret is and stay readable; only `pass:X` holds one.
 */
const PASS_PHRASE_FLAG = /^-pass(?:in|out)?$/;
const PASS_PHRASE_SOURCE = /^(?:(?:env|file|fd):.+|stdin)$/;

/** A setting's value, not a secret (`-o PasswordAuthentication=no`, `--password-auth=off`). */
const SETTING_VALUE = /^(yes|no|true|false|on|off|none|null|0|1)$/i;
/**
 * A bare `user:password` argument (`app bob:PW host`): a plain name, then a value with a letter and a digit.
 * `nginx:latest`, `8080:80`, `host.example:/tmp/`, `sha256:…` and image tags (`node:20-alpine`) stay.
 */
const BARE_USER_PASSWORD = /^([A-Za-z][A-Za-z_-]*):(?=[^:@/=]*[0-9])(?=[^:@/=]*[A-Za-z])([^\s:@/=]+)$/;
/** A tag or version (`20-alpine`, `v1.2.3`, `3.12-slim`, `v2beta1`), not a password. */
const VERSION_LIKE = /^v?\d[a-z0-9._-]*$/;

/** `-u`, `--user`, `--auth` of any program: a `user:password` value loses its password (uid:gid stays). */
const USER_FLAGS = new Set(["-U", "-u", "--user", "--auth"]);

/** An authorization scheme alone, or ending an argument (`Authorization: Bearer`): the next word is the secret. */
const SCHEME = /^(Bearer|Basic|Digest|Token|Negotiate)$/i;
/** A scheme as its own argument with no header before it (`tool Basic <base64>`): as it is written in headers. */
const SCHEME_WORD = /^(Bearer|Basic|Negotiate|Token)$/;
/**
 * A word that looks like a credential after a scheme word: token characters only, with a digit or a symbol of a
 * token, or long (the rule SCHEME_CREDENTIAL applies in text, so `Bearer token missing` stays).
 */
const TOKEN_WORD = /^(?!-)(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-]|[A-Za-z0-9._~+/=-]{12})[A-Za-z0-9._~+/=-]+$/;
/** A secret header's name as a whole argument (`-H Authorization: Bearer X` unquoted): its value follows. */
const HEADER_NAME_ARG = /^([A-Za-z0-9-]+):$/;
const HEADER_AND_SCHEME = /^([A-Za-z0-9-]+):\s*(Bearer|Basic|Digest|Token|Negotiate)$/i;

/** `user:password` → `user:[masked]`; anything else (a plain user, uid:gid) unchanged. */
function maskedUser(value: string): string {
  const colon = value.indexOf(":");
  if (colon <= 0 || /^\d+:\d+$/.test(value)) return value;
  return `${value.slice(0, colon)}:${MASK}`;
}

/**
 * The command table's rules (mask-commands.ts) for the program and for every program named further on (`sudo
 * mysql -pX`, `ssh -o ProxyCommand=sshpass -p X`): each applied to the words from its name on, at most
 * COMMAND_WINDOW_WORDS of them (an argv of 100,000 program names is anyone's to start: linear, not quadratic).
 */
function maskByCommandRules(argv: readonly string[]): string[] {
  const out = maskCommandWords(argv);
  for (let i = 1; i < out.length; i++) {
    const word = out[i] ?? "";
    const program = programOf(word.slice(word.lastIndexOf("=") + 1));
    if (!program || !RULED_PROGRAMS.includes(program)) continue;
    const masked = maskCommandWords([program, ...out.slice(i + 1, i + 1 + COMMAND_WINDOW_WORDS)]);
    for (let k = 1; k < masked.length; k++) out[i + k] = masked[k] ?? "";
  }
  return out;
}

/**
 * Mask the secrets in a process's argv: the command table's per-program rules, then what every program shares:
 * `--password=…` and `NAME=…` with a secret-looking name, the argument after `--password`/`--token`…, URL
 * userinfo, and whatever maskText finds (bearer tokens, JWTs, `token=` inside a value).
 */
export function maskArgv(argv: readonly string[]): string[] {
  const byRule = maskByCommandRules(argv);
  const out: string[] = [];
  let maskNext = false;
  let stdinNext = false;
  let userNext = false;
  // A header split over arguments: its name seen (the value follows), or name and scheme seen (the secret).
  let headerValueNext = false;
  let credentialNext = false;
  let keyNext = false;
  let passPhraseNext = false;
  let schemeNext = false;
  for (const arg of byRule) {
    const afterSecretFlag = maskNext;
    const afterStdinFlag = stdinNext;
    const afterUserFlag = userNext;
    const afterKeyFlag = keyNext;
    const afterPassPhraseFlag = passPhraseNext;
    const afterScheme = schemeNext;
    maskNext = false;
    stdinNext = false;
    userNext = false;
    keyNext = false;
    passPhraseNext = false;
    schemeNext = false;
    if (afterKeyFlag && !arg.startsWith("-") && !KEY_PATH.test(arg)) {
      out.push(MASK);
      continue;
    }
    if (afterPassPhraseFlag && (PASS_PHRASE_SOURCE.test(arg) || arg.startsWith("pass:"))) {
      out.push(PASS_PHRASE_SOURCE.test(arg) ? arg : `pass:${MASK}`);
      continue;
    }
    if (afterScheme && TOKEN_WORD.test(arg)) {
      out.push(MASK);
      continue;
    }
    if (credentialNext) {
      credentialNext = false;
      out.push(MASK);
      continue;
    }
    if (headerValueNext) {
      headerValueNext = false;
      credentialNext = SCHEME.test(arg);
      out.push(credentialNext ? arg : MASK);
      continue;
    }
    const header = HEADER_NAME_ARG.exec(arg) ?? HEADER_AND_SCHEME.exec(arg);
    if (header?.[1] && isSecretHeader(header[1]) && !CHALLENGE.test(header[1])) {
      out.push(arg);
      if (header[2]) credentialNext = true;
      else headerValueNext = true;
      continue;
    }
    // getopt takes the next word as the value whatever it starts with; `--verbose` is still read as an option,
    // and `--password -- X` hides the word after the `--`.
    if (afterSecretFlag && arg === "--") {
      out.push(arg);
      maskNext = true;
      continue;
    }
    if ((afterSecretFlag && !arg.startsWith("--")) || (afterStdinFlag && !arg.startsWith("-"))) {
      out.push(MASK);
      continue;
    }
    if (afterUserFlag && !arg.startsWith("-")) {
      // Samba's -U user%password (smbclient, rpcclient, smbmap…): the password goes, the user stays.
      if (arg.includes("%")) {
        out.push(`${arg.slice(0, arg.indexOf("%"))}%${MASK}`);
        continue;
      }
      if (arg !== maskedUser(arg)) {
        out.push(maskedUser(arg));
        continue;
      }
    }
    userNext = USER_FLAGS.has(arg);
    if (arg.startsWith("--user=") && arg.includes("%")) {
      out.push(`${arg.slice(0, arg.indexOf("%"))}%${MASK}`);
      continue;
    }
    const userEq = /^(--user|--auth)=(.*)$/.exec(arg);
    if (userEq?.[2] !== undefined && userEq[2] !== maskedUser(userEq[2])) {
      out.push(`${userEq[1]}=${maskedUser(userEq[2])}`);
      continue;
    }
    if (out.length > 0 && KEY_FLAG.test(arg)) {
      out.push(arg);
      keyNext = true;
      continue;
    }
    if (out.length > 0 && PASS_PHRASE_FLAG.test(arg)) {
      out.push(arg);
      passPhraseNext = true;
      maskNext = SECRET_FLAG.test(arg);
      continue;
    }
    if (out.length > 0 && (SECRET_FLAG.test(arg) || STDIN_FLAG.test(arg))) {
      out.push(arg);
      maskNext = SECRET_FLAG.test(arg);
      stdinNext = !maskNext;
      continue;
    }
    if (out.length > 0 && SCHEME_WORD.test(arg)) {
      out.push(arg);
      schemeNext = true;
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq > 0 ? arg.slice(0, eq) : "";
    if (
      name &&
      !name.includes("://") &&
      SECRET_ARG_NAME.test(name.replace(/^-+D?/, "")) &&
      !SETTING_VALUE.test(arg.slice(eq + 1))
    ) {
      out.push(`${name}=${MASK}`);
      continue;
    }
    const bare = BARE_USER_PASSWORD.exec(arg);
    if (out.length > 0 && bare && !VERSION_LIKE.test(bare[2] ?? "")) {
      out.push(`${bare[1]}:${MASK}`);
      continue;
    }
    out.push(maskText(arg));
  }
  return out;
}

/**
 * A command line as we show it: argv (or a line already joined by spaces) with secrets masked, joined by
 * spaces. Cut it after masking (a cut before could leave half a secret unmasked).
 */
export function maskCommandLine(argv: readonly string[] | string): string {
  // A line already joined is masked as text first, while its quotes still hold their values together.
  const args = typeof argv === "string" ? maskText(argv).split(/\s+/).filter(Boolean) : argv;
  // Then the line as a whole: forms that span arguments (a PEM key's lines).
  return maskText(maskArgv(args).join(" "));
}
