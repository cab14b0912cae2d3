// The route tables as procfs prints them, recorded in a network namespace (fixtures/proc-*.txt, made with
// the `ip route add …` lines below): parsed into route_info's rows, and refused where only netlink can say.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ipv6, parseProcIpv6Route, parseProcNetRoute } from "../../src/parse/proc-route.ts";

const fixture = (name: string) => readFileSync(join(import.meta.dirname, "../fixtures", name), "utf8");

// ip route add default via 192.0.2.1 metric 100; ip route add 192.0.2.77 via 192.0.2.1
// ip route add 203.0.113.0/24 nexthop via 192.0.2.1 dev a0 weight 1 nexthop via 192.0.2.3 dev a0 weight 3
describe("/proc/net/route (the IPv4 main table)", () => {
  it("gives dst, gateway, device and metric, host routes without /32, multipath as its first nexthop", () => {
    expect(parseProcNetRoute(fixture("proc-net-route.txt"))).toEqual({
      inexact: 0,
      routes: [
        { dst: "default", via: "192.0.2.1", dev: "a0", family: 4, metric: 100 },
        { dst: "192.0.2.0/24", via: null, dev: "a0", family: 4, metric: 0 },
        { dst: "192.0.2.77", via: "192.0.2.1", dev: "a0", family: 4, metric: 0 },
        { dst: "203.0.113.0/24", via: "192.0.2.1", dev: "a0", family: 4, metric: 0 },
      ],
    });
  });

  it("counts unreachable and blackhole routes as inexact (their type is netlink's)", () => {
    const t = parseProcNetRoute(fixture("proc-net-route-reject.txt"));
    expect(t.inexact).toBe(2);
    expect(t.routes.map((r) => r.dst)).toEqual(["default", "192.0.2.0/24", "192.0.2.77", "203.0.113.0/24"]);
  });

  it("a header alone is an empty table", () => {
    expect(parseProcNetRoute(fixture("proc-net-route.txt").split("\n")[0] ?? "")).toEqual({ routes: [], inexact: 0 });
  });
});

// ip -6 route add default via 2001:db8:10::1 dev a0; ip -6 route add 2001:db8:67::1/128 dev a0
// ip -6 route add 2001:db8:77::/48 nexthop via 2001:db8:10::1 dev a0 weight 2 nexthop via 2001:db8:10::3 dev a0
// ip -6 route add 2001:db8:66::/48 via 2001:db8:10::1 table 100   (another table: not main, not listed)
describe("/proc/net/ipv6_route (every table; main is the one before local)", () => {
  it("lists the main table only, in the kernel's order, siblings of a multipath route as rows", () => {
    expect(parseProcIpv6Route(fixture("proc-ipv6-route.txt"))).toEqual({
      inexact: 0,
      routes: [
        { dst: "2001:db8:10::/64", via: null, dev: "a0", family: 6, metric: 256 },
        { dst: "2001:db8:67::1", via: null, dev: "a0", family: 6, metric: 1024 },
        { dst: "2001:db8:77::/48", via: "2001:db8:10::1", dev: "a0", family: 6, metric: 1024 },
        { dst: "2001:db8:77::/48", via: "2001:db8:10::3", dev: "a0", family: 6, metric: 1024 },
        { dst: "fe80::/64", via: null, dev: "a1", family: 6, metric: 256 },
        { dst: "fe80::/64", via: null, dev: "a0", family: 6, metric: 256 },
        { dst: "default", via: "2001:db8:10::1", dev: "a0", family: 6, metric: 1024 },
      ],
    });
  });

  it("counts reject and source-specific routes as inexact, skips the table's null entry", () => {
    const t = parseProcIpv6Route(fixture("proc-ipv6-route-reject.txt"));
    expect(t?.inexact).toBe(2);
    expect(t?.routes.some((r) => r.dev === "lo")).toBe(false);
  });

  it("a file without a local table last is not trusted", () => {
    const lines = fixture("proc-ipv6-route.txt").split("\n");
    const withoutLocal = lines.filter((l) => !/80200001|^ff00/.test(l)).join("\n");
    expect(parseProcIpv6Route(withoutLocal)).toBeUndefined();
  });

  it("addresses as iproute2 prints them", () => {
    expect(ipv6("20010db8000000000000000000000001")).toBe("2001:db8::1");
    expect(ipv6("fe800000000000000000000000000000")).toBe("fe80::");
    expect(ipv6("20010db8000100000000000100000000")).toBe("2001:db8:1::1:0:0"); // the first of two equal runs (RFC 5952, glibc alike)
  });
});
