// Parser tests against `ip -j route` output recorded from a real kernel (fixtures/record.sh).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { defaultGateway, parseIpRoute, type RouteRow } from "../../src/parse/ip-route.ts";

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), "utf8");

const v4 = (dst: string, via: string | null, dev: string | null, extra: Partial<RouteRow> = {}): RouteRow => ({
  dst,
  via,
  dev,
  family: 4,
  metric: 0,
  proto: "boot",
  type: "unicast",
  linkdown: false,
  ...extra,
});
const v6 = (dst: string, via: string | null, dev: string | null, extra: Partial<RouteRow> = {}): RouteRow => ({
  ...v4(dst, via, dev, extra),
  family: 6,
  ...extra,
});

describe("parseIpRoute", () => {
  it("reads every IPv4 route kind: defaults by metric, multipath, via inet6, linkdown, blackhole, unreachable", () => {
    expect(parseIpRoute(fixture("ip-route-4.json"), 4)).toEqual([
      v4("default", "192.0.2.1", "wan0", { metric: 100 }),
      v4("default", "198.51.100.1", "wan1", { metric: 200 }),
      v4("default", "192.0.2.1", "wan0", { metric: 300, weight: 1 }),
      v4("default", "198.51.100.1", "wan1", { metric: 300, weight: 3 }),
      v4("10.55.0.0/16", "2001:db8:10::1", "wan0"),
      v4("10.66.0.0/16", null, null, { type: "blackhole" }),
      v4("10.77.0.0/24", null, "lan0", { proto: "kernel", linkdown: true }),
      v4("10.78.0.0/16", "10.77.0.1", "lan0", { linkdown: true }),
      v4("192.0.2.0/24", null, "wan0", { proto: "kernel" }),
      v4("198.18.0.0/15", null, null, { type: "unreachable" }),
      v4("198.51.100.0/24", null, "wan1", { proto: "kernel" }),
      v4("203.0.113.0/24", "192.0.2.1", "wan0", { weight: 1 }),
      v4("203.0.113.0/24", "198.51.100.1", "wan1", { weight: 2 }),
    ]);
  });

  it("reads IPv6 routes: on-link, multipath, unreachable (no dev lo), link-local, default", () => {
    expect(parseIpRoute(fixture("ip-route-6.json"), 6)).toEqual([
      v6("2001:db8:10::/64", null, "wan0", { metric: 256, proto: "kernel" }),
      v6("2001:db8:99::/48", "2001:db8:10::1", "wan0", { metric: 1024, weight: 1 }),
      v6("2001:db8:99::/48", "2001:db8:10::3", "wan0", { metric: 1024, weight: 1 }),
      v6("2001:db8:dead::/48", null, null, { metric: 1024, type: "unreachable" }),
      v6("fe80::/64", null, "wan0", { metric: 256, proto: "kernel" }),
      v6("default", "2001:db8:10::1", "wan0", { metric: 1024 }),
    ]);
  });

  it("treats empty output as no routes", () => {
    expect(parseIpRoute("[]\n", 4)).toEqual([]);
    expect(parseIpRoute("", 6)).toEqual([]);
  });
});

describe("defaultGateway", () => {
  const rows4 = parseIpRoute(fixture("ip-route-4.json"), 4);
  const rows6 = parseIpRoute(fixture("ip-route-6.json"), 6);

  it("picks the lowest-metric IPv4 default over IPv6", () => {
    expect(defaultGateway([...rows6, ...rows4])).toEqual({ via: "192.0.2.1", dev: "wan0", family: 4, linkdown: false });
  });

  it("falls back to the IPv6 default when there is no IPv4 one", () => {
    expect(defaultGateway(rows6)).toEqual({ via: "2001:db8:10::1", dev: "wan0", family: 6, linkdown: false });
  });

  it("is null without a default route, and ignores unreachable defaults", () => {
    expect(defaultGateway(rows4.filter((r) => r.dst !== "default"))).toBeNull();
    expect(defaultGateway([v4("default", null, null, { type: "unreachable" })])).toBeNull();
  });

  it("takes the first nexthop of a winning multipath default, and reports a dead link", () => {
    const multipath = rows4.filter((r) => r.metric === 300);
    expect(defaultGateway(multipath)).toEqual({ via: "192.0.2.1", dev: "wan0", family: 4, linkdown: false });
    const down = [v4("default", "10.77.0.1", "lan0", { linkdown: true })];
    expect(defaultGateway(down)).toEqual({ via: "10.77.0.1", dev: "lan0", family: 4, linkdown: true });
  });

  it("keeps a point-to-point default (no gateway) with via null", () => {
    expect(defaultGateway([v4("default", null, "wg0")])).toEqual({ via: null, dev: "wg0", family: 4, linkdown: false });
  });
});
