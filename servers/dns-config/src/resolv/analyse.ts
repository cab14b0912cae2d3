/**
 * dns_config_get's answer: follow /etc/resolv.conf inside the root, read it as glibc does, decide who manages it
 * and the mode, and find the servers that really answer (behind systemd-resolved's stub, its upstream ones).
 */
import { readInRoot } from "../fs/read-bounded.ts";
import { type LinkDns, readLinkDns } from "../resolved/links.ts";
import { resolvedRunning } from "../resolved/running.ts";
import {
  type ManagedBy,
  NM_NO_STUB_FILE,
  ownerOf,
  RESOLVED_STUB_ADDRESSES,
  RESOLVED_UPLINK_FILE,
  type ResolvedView,
} from "./owner.ts";
import {
  MAX_NAMESERVERS,
  OLD_GLIBC_SEARCH_CHARS,
  OLD_GLIBC_SEARCH_DOMAINS,
  parseResolvConf,
  type ResolverOptions,
} from "./parse.ts";

export const RESOLV_CONF = "/etc/resolv.conf";

export type Mode = "resolved" | "resolvconf" | "other";

export interface DnsConfig {
  mode: Mode;
  servers: string[];
  search: string[];
  managed_by: ManagedBy;
  decided_by: "path" | "header" | "none";
  file: string;
  points_to: string | null;
  read: string | null;
  resolved_view: ResolvedView | null;
  nameservers: string[];
  stub: string[];
  upstream: string[];
  upstream_from: string | null;
  links: LinkDns[];
  options: ResolverOptions;
  options_raw: string[];
  warnings: string[];
}

const isStub = (ip: string) => RESOLVED_STUB_ADDRESSES.includes(ip);

/** The servers behind resolved's stub: its uplink file, else per-link state, else NetworkManager's no-stub file. */
async function upstreamOf(root: string, links: LinkDns[]): Promise<{ servers: string[]; from: string | null }> {
  const uplink = await readInRoot(root, RESOLVED_UPLINK_FILE);
  const fromUplink = uplink.text ? parseResolvConf(uplink.text).nameservers.filter((ip) => !isStub(ip)) : [];
  if (fromUplink.length > 0) return { servers: fromUplink, from: RESOLVED_UPLINK_FILE };
  const fromLinks = [...new Set(links.flatMap((l) => l.servers))];
  if (fromLinks.length > 0) return { servers: fromLinks, from: "per-link state" };
  const nm = await readInRoot(root, NM_NO_STUB_FILE);
  const fromNm = nm.text ? parseResolvConf(nm.text).nameservers.filter((ip) => !isStub(ip)) : [];
  if (fromNm.length > 0) return { servers: fromNm, from: NM_NO_STUB_FILE };
  return { servers: [], from: null };
}

function fileWarning(problem: string, pointsTo: string | null): string {
  if (problem === "loop") return `${RESOLV_CONF} is a symlink loop: glibc asks 127.0.0.1`;
  // A link to something that is there but not a file (a FIFO, a directory) is not broken: it says what it is.
  const via = pointsTo === null ? "" : ` (→ ${pointsTo})`;
  if (problem === "not_a_file") return `${RESOLV_CONF} is not a regular file${via}: glibc asks 127.0.0.1`;
  if (pointsTo !== null) return `${RESOLV_CONF} is a broken symlink${via}: glibc asks 127.0.0.1`;
  if (problem === "missing") return `${RESOLV_CONF} does not exist: glibc asks 127.0.0.1`;
  return `${RESOLV_CONF} cannot be read (${problem}): glibc asks 127.0.0.1`;
}

export async function readDnsConfig(root: string, budgetMs: number): Promise<DnsConfig> {
  const [file, links] = await Promise.all([readInRoot(root, RESOLV_CONF), readLinkDns(root)]);
  const pointsTo = file.at.links[0]?.target ?? null;
  const warnings: string[] = [];
  if (file.at.climbed) warnings.push("a symlink climbs above the root: held at the root, as chroot does");
  if (file.text === undefined) warnings.push(fileWarning(file.error ?? "unreadable", pointsTo));
  if (file.cut) warnings.push("resolv.conf is larger than 64 KiB: only its start was read");
  const conf = parseResolvConf(file.text ?? "");
  // A broken symlink still says what the system meant: the file it names decides the manager.
  const owner = ownerOf(file.at.path, conf.comments);
  const used = conf.nameservers.slice(0, MAX_NAMESERVERS);
  const viaStub = used.length > 0 && used.every(isStub);
  let view: ResolvedView | null = owner.view ?? null;
  if (view === null && viaStub) view = "foreign";
  const mode: Mode = view !== null ? "resolved" : owner.managedBy === "resolvconf" ? "resolvconf" : "other";

  if (owner.by === "header" && owner.managedBy === "systemd-resolved" && file.at.links.length === 0) {
    warnings.push("a copy of systemd-resolved's file, not a symlink to it: it will not follow changes");
  }
  if (file.text !== undefined && conf.nameservers.length === 0) {
    warnings.push("no nameserver lines: glibc falls back to 127.0.0.1");
  }
  if (conf.nameservers.length > MAX_NAMESERVERS) {
    warnings.push(`${conf.nameservers.length} nameservers: glibc uses only the first ${MAX_NAMESERVERS}`);
  }
  const searchChars = conf.search.join(" ").length;
  if (conf.search.length > OLD_GLIBC_SEARCH_DOMAINS || searchChars > OLD_GLIBC_SEARCH_CHARS) {
    warnings.push(
      `search list over ${OLD_GLIBC_SEARCH_DOMAINS} domains / ${OLD_GLIBC_SEARCH_CHARS} chars (${conf.search.length}, ${searchChars}): glibc before 2.26 drops the rest`,
    );
  }
  warnings.push(...conf.warnings);

  const stub = conf.nameservers.filter(isStub);
  let upstream: string[] = [];
  let upstreamFrom: string | null = null;
  let servers = used;
  if (viaStub) {
    const up = await upstreamOf(root, links);
    upstream = up.servers;
    upstreamFrom = up.from;
    if (upstream.length > 0) servers = upstream;
    else warnings.push("the servers behind systemd-resolved's stub are unknown: no uplink file or per-link state");
  } else if (view === "uplink") {
    upstream = conf.nameservers;
    upstreamFrom = file.at.path;
  }

  if (viaStub || view === "stub" || view === "static") {
    const running = await resolvedRunning(root, budgetMs);
    if (!running.running) {
      warnings.push(`${stub[0] ?? "127.0.0.53"} stub but systemd-resolved is not running: lookups will fail`);
    }
  }

  return {
    mode,
    servers,
    search: conf.search,
    managed_by: owner.managedBy,
    decided_by: owner.by,
    file: RESOLV_CONF,
    points_to: pointsTo,
    read: file.text === undefined ? null : file.at.path,
    resolved_view: view,
    nameservers: conf.nameservers,
    stub,
    upstream,
    upstream_from: upstreamFrom,
    links,
    options: conf.options,
    options_raw: conf.options_raw,
    warnings,
  };
}
