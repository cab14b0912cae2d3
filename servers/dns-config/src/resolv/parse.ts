/**
 * resolv.conf read the way glibc's stub resolver reads it (resolv/res_init.c, glibc 2.36): a keyword counts only
 * at the start of a line and followed by a blank; `#` or `;` in the first column is a comment; the last `search`
 * or `domain` line wins; every `options` line adds; at most three nameservers are used.
 */
import { isIP } from "node:net";

/** glibc uses at most three nameservers (MAXNS) and ignores the rest. */
export const MAX_NAMESERVERS = 3;
/** glibc before 2.26 kept at most 6 search domains (MAXDNSRCH) in 256 characters. */
export const OLD_GLIBC_SEARCH_DOMAINS = 6;
export const OLD_GLIBC_SEARCH_CHARS = 256;

export interface ResolverOptions {
  ndots: number;
  timeout: number;
  attempts: number;
  rotate: boolean;
  edns0: boolean;
  trust_ad: boolean;
  single_request: boolean;
  single_request_reopen: boolean;
  use_vc: boolean;
  no_tld_query: boolean;
  no_aaaa: boolean;
}

/** glibc's defaults (RES_DFLRETRY, RES_TIMEOUT) and its caps (RES_MAXNDOTS, RES_MAXRETRANS, RES_MAXRETRY). */
export const DEFAULT_OPTIONS: Readonly<ResolverOptions> = Object.freeze({
  ndots: 1,
  timeout: 5,
  attempts: 2,
  rotate: false,
  edns0: false,
  trust_ad: false,
  single_request: false,
  single_request_reopen: false,
  use_vc: false,
  no_tld_query: false,
  no_aaaa: false,
});
const CAPS = { ndots: 15, timeout: 30, attempts: 5 } as const;
const FLAGS: Record<string, keyof ResolverOptions> = {
  rotate: "rotate",
  edns0: "edns0",
  "trust-ad": "trust_ad",
  "single-request": "single_request",
  "single-request-reopen": "single_request_reopen",
  "use-vc": "use_vc",
  "no-tld-query": "no_tld_query",
  no_tld_query: "no_tld_query",
  "no-aaaa": "no_aaaa",
};
/** Options glibc accepts that change nothing a reader here needs. */
const QUIET = new Set(["debug", "inet6", "no-reload", "no-check-names", "insecure1", "insecure2"]);

export interface ResolvConf {
  /** Every valid nameserver line, in order (glibc uses the first three). */
  nameservers: string[];
  search: string[];
  options: ResolverOptions;
  /** Every word of every options line, as written. */
  options_raw: string[];
  /** Comment lines (without their # or ;): where managers sign the file. */
  comments: string[];
  warnings: string[];
}

/** A nameserver as glibc takes it: an IPv4 or IPv6 address, IPv6 optionally with a %scope. */
function nameserverAddress(word: string): string | undefined {
  if (isIP(word) === 4) return word;
  const [addr = "", scope] = word.split("%", 2);
  if (isIP(addr) === 6 && (scope === undefined || /^[A-Za-z0-9_.-]{1,15}$/.test(scope))) return word;
  return undefined;
}

function keyword(line: string, name: string): string | undefined {
  if (!line.startsWith(name)) return undefined;
  const next = line[name.length];
  return next === " " || next === "\t" ? line.slice(name.length + 1) : undefined;
}

const words = (text: string) => text.split(/[ \t]+/).filter(Boolean);

export function parseResolvConf(text: string): ResolvConf {
  const conf: ResolvConf = {
    nameservers: [],
    search: [],
    options: { ...DEFAULT_OPTIONS },
    options_raw: [],
    comments: [],
    warnings: [],
  };
  const indented: number[] = [];
  const bad: string[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.replace(/\r$/, "");
    if (line.startsWith("#") || line.startsWith(";")) {
      conf.comments.push(line.slice(1).trim());
      return;
    }
    if (/^[ \t]+(nameserver|search|domain|options)[ \t]/.test(line)) indented.push(i + 1);
    let rest = keyword(line, "nameserver");
    if (rest !== undefined) {
      const word = words(rest)[0];
      if (!word) return;
      const addr = nameserverAddress(word);
      if (addr) conf.nameservers.push(addr);
      else bad.push(word);
      return;
    }
    rest = keyword(line, "domain");
    if (rest !== undefined) {
      const word = words(rest)[0];
      if (word) conf.search = [word];
      return;
    }
    rest = keyword(line, "search");
    if (rest !== undefined) {
      const list = words(rest);
      if (list.length > 0) conf.search = list;
      return;
    }
    rest = keyword(line, "options");
    if (rest !== undefined) {
      for (const word of words(rest)) applyOption(conf, word);
    }
  });
  if (indented.length > 0) {
    conf.warnings.push(`indented line ${indented.join(", ")}: glibc ignores a keyword not in the first column`);
  }
  if (bad.length > 0) conf.warnings.push(`nameserver not an IP address, ignored: ${bad.slice(0, 5).join(", ")}`);
  return conf;
}

function applyOption(conf: ResolvConf, word: string): void {
  conf.options_raw.push(word);
  const flag = FLAGS[word];
  if (flag) {
    (conf.options as unknown as Record<string, boolean>)[flag] = true;
    return;
  }
  const m = /^(ndots|timeout|attempts):(.*)$/.exec(word);
  if (m) {
    const key = m[1] as keyof typeof CAPS;
    // glibc reads the number with atoi: "ndots:x" is 0, "ndots:2x" is 2.
    const n = Number.parseInt(m[2] ?? "", 10);
    conf.options[key] = Math.min(Number.isNaN(n) || n < 0 ? 0 : n, CAPS[key]);
    return;
  }
  if (!QUIET.has(word)) conf.warnings.push(`unknown option "${word}": glibc ignores it`);
}
