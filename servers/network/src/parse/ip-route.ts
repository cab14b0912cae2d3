/** Parse `ip -j -4|-6 route show table main` (iproute2 JSON) into route_info rows. */

interface NextHopJson {
  gateway?: string;
  /** RFC 5549: an IPv4 route via an IPv6 gateway comes as `via: { family, host }`. */
  via?: { host?: string };
  dev?: string;
  weight?: number;
  flags?: string[];
}

interface IpRouteJson extends NextHopJson {
  type?: string;
  dst?: string;
  protocol?: string;
  metric?: number;
  nexthops?: NextHopJson[];
}

export interface RouteRow {
  dst: string;
  via: string | null;
  dev: string | null;
  family: 4 | 6;
  metric: number;
  /** netlink's alone: absent when the routes came from /proc (read/routes.ts). */
  proto?: string;
  type: string;
  /** Only on rows that came from a multipath route: one row per nexthop. */
  weight?: number;
  linkdown: boolean;
}

export interface Gateway {
  via: string | null;
  dev: string | null;
  family: 4 | 6;
  linkdown: boolean;
}

const DROP_TYPES = new Set(["unreachable", "blackhole", "prohibit", "throw"]);

function hop(h: NextHopJson): Pick<RouteRow, "via" | "dev" | "linkdown"> {
  const flags = h.flags ?? [];
  return {
    via: h.gateway ?? h.via?.host ?? null,
    dev: h.dev ?? null,
    // "dead" is the kernel's word for a nexthop whose device is gone or down.
    linkdown: flags.includes("linkdown") || flags.includes("dead"),
  };
}

export function parseIpRoute(json: string, family: 4 | 6): RouteRow[] {
  const routes = JSON.parse(json.trim() || "[]") as IpRouteJson[];
  return routes.flatMap((r) => {
    const base = {
      dst: r.dst ?? "default",
      family,
      // IPv4 omits metric 0; iproute2 omits proto "boot" (a route added by hand or a script).
      metric: r.metric ?? 0,
      proto: r.protocol ?? "boot",
      type: r.type ?? "unicast",
    };
    // A multipath route becomes one flat row per nexthop, so every row keeps the { dst, via, dev } shape.
    if (r.nexthops?.length) return r.nexthops.map((n) => ({ ...base, ...hop(n), weight: n.weight ?? 1 }));
    // IPv6 files unreachable/blackhole routes under "dev lo": traffic is dropped, it goes to no device.
    const dropped = DROP_TYPES.has(base.type);
    return [{ ...base, ...hop(r), ...(dropped ? { dev: null } : {}) }];
  });
}

/** The gateway traffic to the internet takes: the lowest-metric IPv4 default, else the IPv6 one, else null. */
export function defaultGateway(rows: readonly RouteRow[]): Gateway | null {
  for (const family of [4, 6] as const) {
    const defaults = rows.filter((r) => r.family === family && r.dst === "default" && r.type === "unicast");
    // Stable: on equal metrics the kernel's first listed route (the first nexthop of a multipath) wins.
    const best = defaults.reduce<RouteRow | undefined>((a, r) => (a && a.metric <= r.metric ? a : r), undefined);
    if (best) return { via: best.via, dev: best.dev, family, linkdown: best.linkdown };
  }
  return null;
}
