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
 * those but @ and spaces (`https://svc:a/b#c@host`), then the @. A path with an @ further on is left alone.
 */
const TEXT_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*(?::[^\s@]*)?@/gi;
/** `user:password@host` with no scheme (a proxy setting as often written): the password, up to the last @. */
const BARE_USERINFO = /(?<![\w/:.%-])([^\s:/@]+):(?!\/\/|\[masked\])[^\s@]+@(?=[A-Za-z0-9[])/g;
/** A PEM private key: its body masked, to its END line or to the end of a text cut before it. */
const PEM_KEY = /(-----BEGIN [A-Z ]*PRIVATE KEY-----)[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g;
/** Providers' tokens, recognisable by their prefix whatever surrounds them. */
const PROVIDER_TOKEN =
  /\b(gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}|xox[abposre]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{35}|npm_[A-Za-z0-9]{36}|sk-[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{30,}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|dop_v1_[a-f0-9]{40,}|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}|hvs\.[A-Za-z0-9_-]{20,})/g;
/** An AWS secret access key alone: 40 characters of base64 with a / or + and mixed case and digits. */
const AWS_SECRET =
  /(?<![A-Za-z0-9/+=])(?=[A-Za-z0-9/+]{0,39}[/+])(?=[A-Za-z0-9/+]{0,39}[0-9])(?=[A-Za-z0-9/+]{0,39}[a-z])(?=[A-Za-z0-9/+]{0,39}[A-Z])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g;
/** A flag whose next word is a secret, in a line of text (`--password PW`, `-passin pass:PW`). */
const TEXT_SECRET_FLAG =
  /((?:^|\s)--?[A-Za-z0-9_.-]*(?:password|passwd|passphrase|pwd|secret|token|bearer|(?:api|auth|access|private|client|license)[-_]?key|apikey)(?:[-_]stdin)?\s+)(?!-)\S+/gi;
/**
 * `--key X` / `-key X`: usually a key file's path (`openssl req -key host.key`, `--key /etc/tls/x.pem`), which
 * stays readable; a value with no `/` and no .pem/.key/.p12/.pfx/.der suffix is taken for the key itself.
 */
const TEXT_KEY_FLAG = /((?:^|\s)--?key\s+)(?!-)(?![^\s]*\/)(?![^\s]*\.(?:pem|key|p12|pfx|der)(?:\s|$))\S+/gi;
/** A `--key` value that names a file rather than holding the key (see TEXT_KEY_FLAG). */
const KEY_PATH = /\/|\.(?:pem|key|p12|pfx|der)$/i;
/**
 * Programs whose short flags carry a password, in a line of text: `curl -u user:PW`, `docker login -p PW`,
 * `ldapsearch -w PW`, `sqlcmd -P PW`, `mosquitto_pub -P PW`, `smbclient -U user%PW`, `htpasswd -b f user PW`.
 */
const TEXT_PROGRAM_SECRETS: ReadonlyArray<[RegExp, string]> = [
  [/(\bcurl\b[^\n]*?\s(?:-u|--user|-U|--proxy-user)[\s=]+[^\s:]*:)\S+/gi, `$1${MASK}`],
  [/(\bdocker\b[^\n]*?\blogin\b[^\n]*?\s-p\s+)\S+/gi, `$1${MASK}`],
  [/(\bldap[a-z]*\b[^\n]*?\s-w\s+)\S+/gi, `$1${MASK}`],
  [/(\b(?:sqlcmd|bcp|mosquitto_pub|mosquitto_sub|ipmitool|tsql|isql|osql)\b[^\n]*?\s-P\s+)\S+/gi, `$1${MASK}`],
  // MongoDB's shells and tools (-p is the password, --port the port), rdesktop's -p, net-snmp's v3 passphrases.
  [/(\b(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|rdesktop)\b[^\n]*?\s-p\s+)\S+/gi, `$1${MASK}`],
  // Both of them in one line (-A and -X; -a and -x, the algorithms, stay): a look-behind, so each is found.
  [/(?<=\bsnmp[a-z]*\b[^\n]*?\s-[AX]\s+)(?!\[masked\])\S+/g, MASK],
  [/((?:\s-U\s*|--user=)[^\s%]+%)\S+/g, `$1${MASK}`],
  [/(\bhtpasswd\s+(?:-[A-Za-z]*\s+)*-[A-Za-z]*b[A-Za-z]*\s+(?:-[A-Za-z]*\s+)*\S+\s+\S+\s+)\S+/g, `$1${MASK}`],
  [/\b(pass:)\S+/g, `$1${MASK}`],
  // lftp's -u takes `user,password`.
  [/(\blftp\b[^\n]*?\s-u\s+[^\s,]*,)\S+/gi, `$1${MASK}`],
  // sshpass -p PW or -pPW (also inside ssh's ProxyCommand=…), openssl's -k, az login's -p.
  [/(\bsshpass\b[^\n]*?\s-p\s*)(?!\[masked\])\S+/gi, `$1${MASK}`],
  [/(\bopenssl\b[^\n]*?\s-k\s+)\S+/gi, `$1${MASK}`],
  [/(\baz\b[^\n]*?\s-p\s+)\S+/gi, `$1${MASK}`],
  // Wi-Fi passwords: nmcli's `password PW`, wpa_passphrase's second argument.
  [/(\bnmcli\b[^\n]*?\spassword\s+)\S+/gi, `$1${MASK}`],
  [/(\bwpa_passphrase\s+\S+\s+)\S+/g, `$1${MASK}`],
  // aws configure set aws_secret_access_key PW (and the session token).
  [/(\baws_(?:secret_access_key|session_token)\s+)\S+/gi, `$1${MASK}`],
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

/** Mask bearer and basic credentials, key=value secrets, URL userinfo, keys, tokens and JWTs inside free text. */
export function maskText(text: string): string {
  let out = text
    .replace(PEM_KEY, `$1${MASK}$2`)
    .replace(TEXT_USERINFO, `$1${MASK}@`)
    .replace(BARE_USERINFO, `$1:${MASK}@`);
  for (const [form, masked] of TEXT_PROGRAM_SECRETS) out = out.replace(form, masked);
  out = maskUserPassword(out);
  return (
    out
      .replace(TEXT_SECRET_FLAG, `$1${MASK}`)
      .replace(TEXT_KEY_FLAG, `$1${MASK}`)
      .replace(/\b(Bearer|Basic|Digest|Token)\s+(?!\[masked\])[A-Za-z0-9._~+/=-]+/gi, `$1 ${MASK}`)
      .replace(
        /\b([A-Za-z0-9_.-]*(?:token|secret|password|passwd|pass|pwd|pw|api[_-]?key|apikey|session|sessid|sid|auth|signature|sig|key))\s*=(?!=)\s*(?!\[masked\])([^\s&;,]+)/gi,
        `$1=${MASK}`,
      )
      // The same names as JSON (`"password":"x"`) or as a header-style line (`x-api-key: x`, `secret: x`).
      .replace(
        /("[A-Za-z0-9_.-]*(?:token|secret|password|passwd|pass|pwd|api[_-]?key|apikey|auth|credential)[A-Za-z0-9_.-]*"\s*:\s*)"[^"]*"/gi,
        `$1"${MASK}"`,
      )
      .replace(
        /\b([A-Za-z0-9_.-]*(?:token|secret|password|passwd|pwd|api[_-]?key|apikey)\s*:\s*)(?!\/\/|\[masked\])([^\s"',;]+)/gi,
        `$1${MASK}`,
      )
      .replace(JWT, MASK)
      .replace(PROVIDER_TOKEN, MASK)
      .replace(AWS_SECRET, MASK)
  );
}

/** An option or variable name whose value is a secret: --password=…, DB_PASSWORD=…, -Dtrust.keyStorePassword=… */
const SECRET_ARG_NAME = new RegExp(`${SECRET_NAME.source}|(pass|pwd|pw|key)$`, "i");
/** A flag whose NEXT argument is the secret (`--password hunter2`): only names that end in the secret word. */
const SECRET_FLAG =
  /^--?[A-Za-z0-9_.-]*(password|passwd|passphrase|pass|pwd|secret|token|bearer|(?:api|auth|access|secret|private|client|license)[-_]?key|apikey|credentials?|auth)(?:[-_]stdin)?$/i;
/** `--key`/`-key`: its next argument is masked unless it names a file (KEY_PATH). */
const KEY_FLAG = /^--?key$/i;
/** Userinfo in any URL inside an argument: scheme://user:pass@ → scheme://[masked]@ */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/@\s?#]+@/gi;
/**
 * Programs whose short options carry a password, where `-p` is not a port: `-p` glued to its value for the
 * MySQL clients (`-psecret`; a bare `-p` prompts), the next argument for sshpass and redis-cli.
 */
const SHORT_SECRET: Record<string, { glued?: string; next?: string[] }> = {
  mysql: { glued: "-p" },
  mysqldump: { glued: "-p" },
  mysqladmin: { glued: "-p" },
  mariadb: { glued: "-p" },
  "mariadb-dump": { glued: "-p" },
  sshpass: { glued: "-p", next: ["-p"] },
  openssl: { next: ["-k"] },
  az: { next: ["-p"] },
  nmcli: { next: ["password"] },
  aws: { next: ["aws_secret_access_key", "aws_session_token"] },
  "redis-cli": { next: ["-a"] },
  // curl's user:password (the user stays), docker login's -p, LDAP's bind password, SQL Server's and MQTT's.
  curl: { next: ["-u", "--user", "-U", "--proxy-user"] },
  docker: { next: ["-p"] },
  ldapsearch: { next: ["-w"] },
  ldapmodify: { next: ["-w"] },
  ldapadd: { next: ["-w"] },
  ldapdelete: { next: ["-w"] },
  ldapwhoami: { next: ["-w"] },
  ldappasswd: { next: ["-w", "-s"] },
  sqlcmd: { next: ["-P"] },
  bcp: { next: ["-P"] },
  mosquitto_pub: { next: ["-P"] },
  mosquitto_sub: { next: ["-P"] },
  lftp: { next: ["-u"] },
  // -P as a password (not a port as for ssh, scp, rsync or mysql): IPMI, FreeTDS and ODBC's SQL shells.
  ipmitool: { next: ["-P"] },
  tsql: { next: ["-P"] },
  isql: { next: ["-P"] },
  osql: { next: ["-P"] },
  // -p as a password: MongoDB's shells and tools, rdesktop; net-snmp's v3 auth and privacy passphrases.
  mongo: { next: ["-p"] },
  mongosh: { next: ["-p"] },
  mongodump: { next: ["-p"] },
  mongorestore: { next: ["-p"] },
  mongoexport: { next: ["-p"] },
  mongoimport: { next: ["-p"] },
  rdesktop: { next: ["-p"] },
  snmpwalk: { next: ["-A", "-X"] },
  snmpget: { next: ["-A", "-X"] },
  snmpbulkwalk: { next: ["-A", "-X"] },
  snmpset: { next: ["-A", "-X"] },
};

/** `-u`, `--user`, `--auth` of any program: a `user:password` value loses its password (uid:gid stays). */
const USER_FLAGS = new Set(["-u", "--user", "--auth"]);

/** An authorization scheme alone, or ending an argument (`Authorization: Bearer`): the next word is the secret. */
const SCHEME = /^(Bearer|Basic|Digest|Token|Negotiate)$/i;
/** A secret header's name as a whole argument (`-H Authorization: Bearer X` unquoted): its value follows. */
const HEADER_NAME_ARG = /^([A-Za-z0-9-]+):$/;
const HEADER_AND_SCHEME = /^([A-Za-z0-9-]+):\s*(Bearer|Basic|Digest|Token|Negotiate)$/i;

/** The secret part of a value after a password flag: the password of `user:pw` (curl) or `user%pw` (Samba). */
function maskedValue(program: string, value: string): string {
  if (program === "curl") {
    const colon = value.indexOf(":");
    if (colon > 0) return `${value.slice(0, colon)}:${MASK}`;
  }
  if (program === "lftp") {
    const comma = value.indexOf(",");
    if (comma > 0) return `${value.slice(0, comma)},${MASK}`;
  }
  return MASK;
}

/** `user:password` → `user:[masked]`; anything else (a plain user, uid:gid) unchanged. */
function maskedUser(value: string): string {
  const colon = value.indexOf(":");
  if (colon <= 0 || /^\d+:\d+$/.test(value)) return value;
  return `${value.slice(0, colon)}:${MASK}`;
}

/**
 * Mask the secrets in a process's argv: `--password=…` and `NAME=…` with a secret-looking name, the argument
 * after `--password`/`--token`…, `-p…` only for programs where it is a password, URL userinfo, and whatever
 * maskText finds (bearer tokens, JWTs, `token=` inside a value).
 */
export function maskArgv(argv: readonly string[]): string[] {
  const program = (argv[0] ?? "").split("/").pop() ?? "";
  const short = SHORT_SECRET[program];
  // docker's -p is a password only for `docker login`; elsewhere it publishes a port.
  const shortNext = program === "docker" && !argv.includes("login") ? undefined : short?.next;
  const out: string[] = [];
  let maskNext = false;
  let userNext = false;
  // A header split over arguments: its name seen (the value follows), or name and scheme seen (the secret).
  let headerValueNext = false;
  let credentialNext = false;
  // sshpass run by another command (`ssh -o ProxyCommand=sshpass -p PW …`): its -p is a password from there on.
  let innerSshpass = false;
  let keyNext = false;
  for (const arg of argv) {
    const afterSecretFlag = maskNext;
    const afterUserFlag = userNext;
    const afterKeyFlag = keyNext;
    maskNext = false;
    userNext = false;
    keyNext = false;
    if (afterKeyFlag && !arg.startsWith("-") && !KEY_PATH.test(arg)) {
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
    if (afterSecretFlag && !arg.startsWith("-")) {
      out.push(maskedValue(program, arg));
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
    userNext = arg === "-U" || USER_FLAGS.has(arg);
    if (arg.startsWith("--user=") && arg.includes("%")) {
      out.push(`${arg.slice(0, arg.indexOf("%"))}%${MASK}`);
      continue;
    }
    const userEq = /^(--user|--auth)=(.*)$/.exec(arg);
    if (userEq?.[2] !== undefined && userEq[2] !== maskedUser(userEq[2])) {
      out.push(`${userEq[1]}=${maskedUser(userEq[2])}`);
      continue;
    }
    if (innerSshpass && (arg === "-p" || (arg.startsWith("-p") && arg.length > 2))) {
      out.push(arg === "-p" ? arg : `-p${MASK}`);
      maskNext = arg === "-p";
      continue;
    }
    if (out.length > 0 && /(^|[=/])sshpass$/.test(arg)) innerSshpass = true;
    if (out.length > 0 && KEY_FLAG.test(arg)) {
      out.push(arg);
      keyNext = true;
      continue;
    }
    if (out.length > 0 && (SECRET_FLAG.test(arg) || shortNext?.includes(arg))) {
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
  // htpasswd -b takes the password as its last argument; wpa_passphrase takes it after the SSID.
  if (program === "htpasswd" && argv.some((a) => /^-[A-Za-z]*b/.test(a)) && out.length > 2) out[out.length - 1] = MASK;
  if (program === "wpa_passphrase" && out.length > 2) out[2] = MASK;
  return out;
}

/**
 * A command line as we show it: argv (or a line already joined by spaces) with secrets masked, joined by
 * spaces. Cut it after masking (a cut before could leave half a secret unmasked).
 */
export function maskCommandLine(argv: readonly string[] | string): string {
  const args = typeof argv === "string" ? argv.split(/\s+/).filter(Boolean) : argv;
  // Then the line as a whole: forms that span arguments (htpasswd -b's last one, a PEM key's lines).
  return maskText(maskArgv(args).join(" "));
}
