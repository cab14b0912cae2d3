/** Parse resolv.conf the way glibc's stub resolver reads it: nameservers in order, search list, options. */
import { open } from "node:fs/promises";
import { isIP } from "node:net";

/** glibc uses at most three nameservers (MAXNS) and ignores the rest. */
export const MAX_NAMESERVERS = 3;
/** With no usable nameserver line glibc asks the local machine. */
export const FALLBACK_NAMESERVER = "127.0.0.1";

export interface ResolvConf {
  nameservers: string[];
  search: string[];
  options: string[];
}

export function parseResolvConf(text: string): ResolvConf {
  const conf: ResolvConf = { nameservers: [], search: [], options: [] };
  for (const raw of text.split("\n").slice(0, 1000)) {
    // Comments start with # or ; at the beginning of a line; glibc also cuts them mid-line.
    const line = raw.replace(/[#;].*$/, "").trim();
    const [keyword, ...args] = line.split(/\s+/);
    if (keyword === "nameserver" && args[0]) {
      if (isIP(args[0]) && conf.nameservers.length < MAX_NAMESERVERS) conf.nameservers.push(args[0]);
    } else if (keyword === "search" || keyword === "domain") {
      // The last search or domain line wins.
      conf.search = args.slice(0, 6);
    } else if (keyword === "options") {
      conf.options.push(...args);
    }
  }
  return conf;
}

/** resolv.conf is a few lines; anything past this is not a resolv.conf worth reading. */
const MAX_RESOLV_CONF_BYTES = 64 * 1024;

export interface DefaultResolver {
  address: string;
  /** "fallback" when the file is missing or names no nameserver: glibc then asks 127.0.0.1. */
  from: "resolv_conf" | "fallback";
}

/** The first nameserver in `path`, read fresh on every call: on a laptop it changes with the network. */
export async function readDefaultResolver(path: string): Promise<DefaultResolver> {
  let text = "";
  try {
    const handle = await open(path, "r");
    try {
      const buf = Buffer.alloc(MAX_RESOLV_CONF_BYTES);
      const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
      text = buf.subarray(0, bytesRead).toString("utf8");
    } finally {
      await handle.close();
    }
  } catch {
    // Missing or unreadable: glibc carries on with its fallback, and so do we (the result says so).
  }
  const first = parseResolvConf(text).nameservers[0];
  return first ? { address: first, from: "resolv_conf" } : { address: FALLBACK_NAMESERVER, from: "fallback" };
}
