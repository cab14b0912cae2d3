/**
 * route_info without a subprocess: the IPv4 main table from /proc/net/route, the IPv6 one from
 * /proc/net/ipv6_route (procfs follows the reader's network namespace), and each device's carrier from
 * /sys/class/net for `linkdown`. Undefined — so the caller runs `ip` — whenever the files cannot say it exactly:
 * a dropping route (its type is netlink's), a source-specific IPv6 route, an ipv6_route whose tables are not
 * laid out as main then local, or a /sys mounted for another namespace. Not seen here, and so not listed: an IPv4
 * multipath route's nexthops after the first, and any route's protocol (route_info's `detail: true` runs `ip`).
 */
import { readdir, readFile } from "node:fs/promises";
import type { RouteRow } from "../parse/ip-route.ts";
import { type ProcRoute, parseProcIpv6Route, parseProcNetRoute } from "../parse/proc-route.ts";
import { procNetDevNames } from "./ifaces.ts";

const IFF_UP = 0x1;

/** A device's link is down for routing when it is not up or has no carrier (the kernel's "linkdown"/"dead"). */
async function linkDown(root: string, dev: string): Promise<boolean> {
  const dir = `${root}/sys/class/net/${dev}`;
  const [flags, carrier] = await Promise.all([
    readFile(`${dir}/flags`, "utf8").catch(() => "0"),
    // EINVAL while the link is down.
    readFile(`${dir}/carrier`, "utf8").catch(() => "0"),
  ]);
  return (Number.parseInt(flags, 16) & IFF_UP) === 0 || carrier.trim() !== "1";
}

export async function routesFromKernel(root = ""): Promise<RouteRow[] | undefined> {
  const [v4, v6, dev, sysNames] = await Promise.all([
    readFile(`${root}/proc/net/route`, "utf8"),
    // No file: IPv6 is off (ipv6.disable=1), so there are no IPv6 routes, as `ip -6 route` would say.
    readFile(`${root}/proc/net/ipv6_route`, "utf8").catch(() => undefined),
    readFile(`${root}/proc/net/dev`, "utf8"),
    readdir(`${root}/sys/class/net`).catch(() => [] as string[]),
  ]);
  const names = procNetDevNames(dev);
  if (names.length !== sysNames.length || names.some((n) => !sysNames.includes(n))) return undefined;
  const four = parseProcNetRoute(v4);
  const six = v6 === undefined ? { routes: [], inexact: 0 } : parseProcIpv6Route(v6);
  if (!six || four.inexact + six.inexact > 0) return undefined;
  const routes: ProcRoute[] = [...four.routes, ...six.routes];
  const devs = [...new Set(routes.map((r) => r.dev))];
  const down = new Map(await Promise.all(devs.map(async (d) => [d, await linkDown(root, d)] as const)));
  return routes.map((r) => ({ ...r, type: "unicast", linkdown: down.get(r.dev) ?? false }));
}
