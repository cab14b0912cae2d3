/**
 * The kernel's own route tables as procfs prints them: /proc/net/route (the IPv4 main table, always exactly
 * that table) and /proc/net/ipv6_route (every IPv6 table, one after another, with no table column). What the
 * files cannot say is left to `ip` (netlink): a route's protocol, an IPv4 multipath route's other nexthops and
 * weights, and which kind of dropping route (unreachable, prohibit, blackhole, throw) a reject entry is.
 */
import { endianness } from "node:os";

/** A route of the main table as the files give it. */
export interface ProcRoute {
  dst: string;
  via: string | null;
  dev: string;
  family: 4 | 6;
  metric: number;
}

/** What a file holds: the main table's routes, and whether any of them drops traffic (its type unknown here). */
export interface ProcTable {
  routes: ProcRoute[];
  /** Routes the file cannot describe exactly (reject entries, source-specific IPv6 routes): ask `ip`. */
  inexact: number;
}

const RTF_GATEWAY = 0x2;
const RTF_REJECT = 0x200;
const RTF_CACHE = 0x01000000;
const RTF_LOCAL = 0x80000000;

/** /proc/net/route prints each address as the 32-bit word in host order. */
function ipv4(hex: string): number[] {
  const n = Number.parseInt(hex, 16) >>> 0;
  const bytes = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
  return endianness() === "LE" ? bytes.reverse() : bytes;
}

const prefixLength = (mask: number[]) => mask.reduce((bits, b) => bits + (b.toString(2).match(/1/g)?.length ?? 0), 0);

/** iproute2 prints a host route (/32, /128) without its length, the whole space as "default". */
function dstOf(address: string, length: number, max: number): string {
  if (length === 0) return "default";
  return length === max ? address : `${address}/${length}`;
}

export function parseProcNetRoute(text: string): ProcTable {
  const out: ProcTable = { routes: [], inexact: 0 };
  for (const line of text.split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 8) continue;
    const [dev = "", dst = "", gw = "", flagsHex = "", , , metric = "0", mask = ""] = f;
    const flags = Number.parseInt(flagsHex, 16);
    // No device: unreachable and prohibit (RTF_REJECT), blackhole and throw (none): only netlink names them.
    if (dev === "*" || flags & RTF_REJECT) {
      out.inexact += 1;
      continue;
    }
    out.routes.push({
      dst: dstOf(ipv4(dst).join("."), prefixLength(ipv4(mask)), 32),
      via: flags & RTF_GATEWAY ? ipv4(gw).join(".") : null,
      dev,
      family: 4,
      metric: Number(metric),
    });
  }
  return out;
}

/** 32 hex digits → the address as iproute2 prints it (RFC 5952, which WHATWG's URL serializer follows). */
export function ipv6(hex: string): string {
  const groups = (hex.match(/.{4}/g) ?? []).map((g) => g.replace(/^0+(?=.)/, "")).join(":");
  return new URL(`http://[${groups}]/`).hostname.slice(1, -1);
}

interface V6Line {
  dst: string;
  plen: number;
  srcPlen: number;
  via: string;
  metric: number;
  flags: number;
  dev: string;
}

/**
 * The tables of /proc/net/ipv6_route in the order the kernel walks them: each table ends with the entries of
 * its root, the whole space (::/0): its default routes, or the table's null entry when it has none.
 */
function tablesOf(lines: V6Line[]): V6Line[][] {
  const tables: V6Line[][] = [];
  let current: V6Line[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const l = lines[i] as V6Line;
    current.push(l);
    const next = lines[i + 1];
    if (l.plen === 0 && (next === undefined || next.plen !== 0)) {
      tables.push(current);
      current = [];
    }
  }
  if (current.length) tables.push(current);
  return tables;
}

/**
 * The IPv6 main table out of /proc/net/ipv6_route. The kernel walks its tables by id modulo 256, main (254) then
 * local (255) last: so the last table must be local (its entries RTF_LOCAL, anycast or multicast) and main is the
 * one before it. Undefined when the file does not have that shape (then ask `ip`).
 */
export function parseProcIpv6Route(text: string): ProcTable | undefined {
  const lines: V6Line[] = [];
  for (const line of text.split("\n")) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10) continue;
    lines.push({
      dst: f[0] ?? "",
      plen: Number.parseInt(f[1] ?? "", 16),
      srcPlen: Number.parseInt(f[3] ?? "", 16),
      via: f[4] ?? "",
      metric: Number.parseInt(f[5] ?? "", 16),
      flags: Number.parseInt(f[8] ?? "", 16) >>> 0,
      dev: f[9] ?? "",
    });
  }
  const tables = tablesOf(lines);
  const local = tables.at(-1);
  const main = tables.at(-2);
  if (!local || !main || !local.some((l) => (l.flags & RTF_LOCAL) !== 0)) return undefined;
  const out: ProcTable = { routes: [], inexact: 0 };
  for (const l of main) {
    if (l.flags & RTF_CACHE) continue;
    // The table's null entry: the root when no default exists (metric 0xffffffff, reject, on lo).
    if (l.plen === 0 && l.metric === 0xffffffff && l.flags & RTF_REJECT) continue;
    if (l.flags & RTF_REJECT || l.srcPlen !== 0 || l.flags & RTF_LOCAL) {
      out.inexact += 1;
      continue;
    }
    out.routes.push({
      dst: dstOf(ipv6(l.dst), l.plen, 128),
      via: l.flags & RTF_GATEWAY ? ipv6(l.via) : null,
      dev: l.dev,
      family: 6,
      metric: l.metric,
    });
  }
  return out;
}
