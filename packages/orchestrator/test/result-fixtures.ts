/**
 * Tool results as the servers return them, typed by the servers' own result types: the compiler holds these
 * fixtures to the real shapes, and the rules planner reads them through the same output schemas.
 */
import type { ResultOf } from "@roadnerd/conventions";
import type { captivePortalCheck } from "@roadnerd/network/tools/captive-portal-check";
import type { dnsResolve } from "@roadnerd/network/tools/dns-resolve";
import type { ifaceInfo } from "@roadnerd/network/tools/iface-info";
import type { routeInfo } from "@roadnerd/network/tools/route-info";
import type { whoUsesPort } from "@roadnerd/ports/tools/who-uses-port";
import type { listFailedUnits } from "@roadnerd/service/tools/list-failed-units";
import type { diskUsage } from "@roadnerd/storage/tools/disk-usage";

const uncut = { truncated: false, omitted: 0 };

type Neighbor = NonNullable<ResultOf<typeof routeInfo>["default_gateway"]>["neighbor"];

type Route = ResultOf<typeof routeInfo>["routes"][number];

/** route_info's result; `onLink` adds a directly connected IPv4 prefix per entry (dev wlan0). */
export function routeResult(
  gateway: { via: string; dev: string; linkdown: boolean; neighbor?: Neighbor } | null,
  onLink: string[] = [],
): ResultOf<typeof routeInfo> {
  const gw = gateway && { neighbor: "known" as const, ...gateway, family: 4 as const };
  const link = { via: null, dev: "wlan0", family: 4, metric: 0, type: "unicast", linkdown: false } as const;
  const routes: Route[] = onLink.map((dst) => ({ dst, ...link }));
  return { default_gateway: gw, routes, ...uncut, summary: "route" };
}

export function ifaceResult(
  interfaces: ReadonlyArray<{ name: string; up: boolean; carrier: boolean; ipv4: string[] }>,
): ResultOf<typeof ifaceInfo> {
  const full = interfaces.map((i) => ({ ...i, mac: null, ipv6: [], state: i.carrier ? "UP" : "DOWN" }));
  return { interfaces: full, ...uncut, summary: "interfaces" };
}

export function dnsResult(
  answers: string[],
  failure?: { error: "E_DNS_FAIL"; detail: "TIMEOUT" },
  resolver = "192.0.2.53",
): ResultOf<typeof dnsResolve> {
  return {
    qname: "example.com",
    type: "A",
    answers: answers.map((data) => ({ name: "example.com", type: "A", ttl: 60, data })),
    resolver,
    resolver_from: "resolv_conf",
    ...failure,
    ...uncut,
    summary: "dns",
  };
}

export function portalResult(p: {
  suspected: boolean;
  status: number | null;
  reason: string;
}): ResultOf<typeof captivePortalCheck> {
  const unknown = "unknown" as const;
  return {
    ...p,
    final_url: "http://neverssl.com/",
    redirects: [],
    probes: [],
    verdicts: { android: unknown, chrome: unknown, networkmanager: unknown, windows_ncsi: unknown, apple: unknown },
    summary: "portal",
  };
}

export function portResult(
  port: number,
  holders: ReadonlyArray<{ pid: number; process: string; unit: string | null }>,
): ResultOf<typeof whoUsesPort> {
  const pids = holders.map((h) => ({ ...h, cmd: h.process, exe: null, user: "root", sockets: [] }));
  const in_use = holders.length > 0;
  return {
    port,
    in_use,
    pids,
    unowned: [],
    note: null,
    connections: null,
    netns: null,
    source: "proc",
    summary: "port",
  };
}

export function diskResult(mounts: ReadonlyArray<{ mount: string; used_pct: number }>): ResultOf<typeof diskUsage> {
  const rows = mounts.map((m) => ({
    ...m,
    fs: "ext4",
    source: "/dev/sda1",
    read_only: false,
    total_gb: 100,
    used_gb: m.used_pct,
    available_gb: 100 - m.used_pct,
    inodes_total: 1000,
    inodes_used: 10,
    inodes_free: 990,
    inodes_used_pct: 1,
    also_at: [],
  }));
  return { mounts: rows, full: [], unanswered: [], hidden: 0, ...uncut, summary: "disk" };
}

export function failedUnitsResult(names: readonly string[]): ResultOf<typeof listFailedUnits> {
  const failed = names.map((name) => ({ name, since: null, description: name }));
  return { failed, ...uncut, summary: "units" };
}
