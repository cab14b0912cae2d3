// route_info against the real server running inside a network namespace this test builds, so every
// route is known exactly. The test reaches the server over a veth to the root namespace. `detail: true` asks
// netlink (`ip`): every field exactly. The default reads /proc and /sys; a second server with no `ip` on its
// EXEC_PATH proves it spawns nothing (a fallback would be E_NO_BINARY), and its answer must be netlink's minus
// what the files cannot say (proto, weights, an IPv4 multipath route's later nexthops).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type RoadNerdClient } from "@roadnerd/client";
import type { ResultOf } from "@roadnerd/conventions";
import { createNetnsLab, type NetnsLab, netnsSkipReason, pollUntil } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { routeInfo } from "../../src/tools/route-info.ts";

const skip = netnsSkipReason();

type RouteInfo = ResultOf<typeof routeInfo>;
type RouteRow = RouteInfo["routes"][number];

const r = (
  dst: string,
  via: string | null,
  dev: string | null,
  family: 4 | 6,
  extra: Partial<RouteRow> = {},
): RouteRow => ({
  dst,
  via,
  dev,
  family,
  metric: family === 4 ? 0 : 1024,
  proto: "boot",
  type: "unicast",
  linkdown: false,
  ...extra,
});

describe.skipIf(skip)(`route_info in a network namespace${skip ? ` (skipped: ${skip})` : ""}`, () => {
  let lab: NetnsLab;
  let host: string;
  let router: string;
  let client: RoadNerdClient;
  let noIp: RoadNerdClient;
  let emptyPath: string;
  let net30: string;
  /** One UDP datagram from the host namespace (to the discard port): the kernel resolves its next hop. */
  const send = (to: string) =>
    lab.exec(host, [
      process.execPath,
      "-e",
      `const s=require("node:dgram").createSocket("udp4");s.send("x",9,${JSON.stringify(to)},()=>s.close())`,
    ]);
  const call = () => client.call<RouteInfo>("route_info", { detail: true });
  /**
   * The peer's end set down or up, and the kernel's word on wan0's carrier awaited: it comes from the link-watch
   * work, up to a second later on a loaded machine (CI once read the routes before it), with the routes' linkdown.
   */
  const peer = async (state: "down" | "up") => {
    lab.ip(router, "link", "set", "wan0p", state);
    const carrier = () =>
      !(JSON.parse(lab.ip(host, "-j", "link", "show", "wan0"))[0]?.flags ?? []).includes("NO-CARRIER");
    expect(await pollUntil(() => carrier() === (state === "up"), 5_000)).toBe(true);
  };
  const fromFiles = () => noIp.call<RouteInfo>("route_info");
  /** netlink's answer as the kernel's files give it (the summary's count aside). */
  const asFiles = ({ summary: _s, ...res }: RouteInfo): Omit<RouteInfo, "summary"> => {
    const seen = new Set<string>();
    const routes = res.routes
      .filter((x) => {
        // /proc/net/route shows an IPv4 multipath route's first nexthop only.
        if (x.family !== 4 || x.weight === undefined) return true;
        if (seen.has(x.dst)) return false;
        seen.add(x.dst);
        return true;
      })
      .map(({ proto: _p, weight: _w, ...rest }) => rest);
    return { ...res, routes };
  };

  beforeAll(async () => {
    emptyPath = await mkdtemp(join(tmpdir(), "rn-noip-"));
    lab = createNetnsLab();
    try {
      host = lab.addNs();
      router = lab.addNs();
      const { nsAddr } = lab.linkToRoot(host);
      net30 = nsAddr.replace(/\.(\d+)$/, (_, last: string) => `.${Number(last) - 2}`);
      lab.veth(
        { ns: host, name: "wan0", mac: "02:52:4e:00:00:10", addrs: ["192.0.2.2/24", "2001:db8:10::2/64"] },
        { ns: router, name: "wan0p", addrs: ["192.0.2.1/24", "2001:db8:10::1/64"] },
      );
      lab.veth(
        { ns: host, name: "wan1", addrs: ["198.51.100.2/24"], ipv6: "off" },
        { ns: router, name: "wan1p", addrs: ["198.51.100.1/24"], ipv6: "off" },
      );
      const served = await lab.serve(host, "network", { env: { HOST: nsAddr } });
      client = createClient(served.url, { token: served.token });
      const withoutIp = await lab.serve(host, "network", { env: { HOST: nsAddr, EXEC_PATH: emptyPath } });
      noIp = createClient(withoutIp.url, { token: withoutIp.token });
    } catch (err) {
      await lab.cleanup();
      throw err;
    }
  });

  afterAll(async () => {
    await lab?.cleanup();
    await rm(emptyPath, { recursive: true, force: true });
  });

  it("no default route: default_gateway is null and only on-link routes are listed", async () => {
    const res = await call();
    expect(res.default_gateway).toBeNull();
    expect(res.routes).toEqual([
      r(`${net30}/30`, null, "mgmt0", 4, { proto: "kernel" }),
      r("192.0.2.0/24", null, "wan0", 4, { proto: "kernel" }),
      r("198.51.100.0/24", null, "wan1", 4, { proto: "kernel" }),
      r("2001:db8:10::/64", null, "wan0", 6, { proto: "kernel", metric: 256 }),
      r("fe80::/64", null, "wan0", 6, { proto: "kernel", metric: 256 }),
    ]);
    expect(res).toMatchObject({ truncated: false, omitted: 0 });
    expect(res.summary).toMatch(/^no default route/);
    expect(asFiles(await fromFiles())).toEqual(asFiles(res));
  });

  it("only an IPv6 default: the gateway is the IPv6 one", async () => {
    lab.ip(host, "-6", "route", "add", "default", "via", "2001:db8:10::1", "dev", "wan0");
    const res = await call();
    expect(res.default_gateway).toEqual({
      via: "2001:db8:10::1",
      dev: "wan0",
      family: 6,
      linkdown: false,
      neighbor: null,
    });
    expect(res.routes[0]).toEqual(r("default", "2001:db8:10::1", "wan0", 6));
    expect(asFiles(await fromFiles())).toEqual(asFiles(res));
  });

  it("IPv4 defaults win by lowest metric; multipath becomes one row per nexthop", async () => {
    lab.ip(host, "route", "add", "default", "via", "198.51.100.1", "dev", "wan1", "metric", "200");
    lab.ip(host, "route", "add", "default", "via", "192.0.2.1", "dev", "wan0", "metric", "100");
    lab.ip(
      host,
      ...["route", "add", "203.0.113.0/24", "nexthop", "via", "192.0.2.1", "dev", "wan0", "weight", "1"],
      ...["nexthop", "via", "198.51.100.1", "dev", "wan1", "weight", "3"],
    );
    lab.ip(host, "route", "add", "unreachable", "198.18.0.0/15");
    const res = await call();
    expect(res.default_gateway).toEqual({
      via: "192.0.2.1",
      dev: "wan0",
      family: 4,
      linkdown: false,
      neighbor: "none",
    });
    expect(res.routes).toEqual([
      r("default", "192.0.2.1", "wan0", 4, { metric: 100 }),
      r("default", "198.51.100.1", "wan1", 4, { metric: 200 }),
      r("default", "2001:db8:10::1", "wan0", 6),
      r(`${net30}/30`, null, "mgmt0", 4, { proto: "kernel" }),
      r("192.0.2.0/24", null, "wan0", 4, { proto: "kernel" }),
      r("198.18.0.0/15", null, null, 4, { type: "unreachable" }),
      r("198.51.100.0/24", null, "wan1", 4, { proto: "kernel" }),
      r("203.0.113.0/24", "192.0.2.1", "wan0", 4, { weight: 1 }),
      r("203.0.113.0/24", "198.51.100.1", "wan1", 4, { weight: 3 }),
      r("2001:db8:10::/64", null, "wan0", 6, { proto: "kernel", metric: 256 }),
      r("fe80::/64", null, "wan0", 6, { proto: "kernel", metric: 256 }),
    ]);
    expect(res.summary).toBe("default via 192.0.2.1 dev wan0 (IPv4); 11 routes");
    // An unreachable route's type is netlink's alone: the default call needs ip, and here there is none.
    const failed = await fromFiles().then(
      () => "answered",
      (e: { code?: string }) => e.code,
    );
    expect(failed).toBe("E_NO_BINARY");
    expect(await client.call<RouteInfo>("route_info")).toEqual(res);
  });

  it("limit cuts the list, defaults first, and says how many were left out", async () => {
    const res = await client.call<RouteInfo>("route_info", { limit: 2, detail: true });
    expect(res.routes.map((x) => `${x.dst} ${x.via}`)).toEqual(["default 192.0.2.1", "default 198.51.100.1"]);
    expect(res).toMatchObject({ truncated: true, omitted: 9 });
    expect(res.default_gateway?.via).toBe("192.0.2.1");
  });

  it("the gateway's link losing carrier shows as linkdown", async () => {
    await peer("down");
    try {
      const res = await call();
      expect(res.default_gateway).toEqual({
        via: "192.0.2.1",
        dev: "wan0",
        family: 4,
        linkdown: true,
        neighbor: "none",
      });
      expect(res.summary).toBe("default via 192.0.2.1 dev wan0 (IPv4) but its link is down; 11 routes");
      // The kernel keeps the routes; every one through wan0 (and only those) is flagged.
      const down = res.routes.filter((x) => x.linkdown).map((x) => `${x.dst} ${x.dev}`);
      expect(down).toEqual([
        "default wan0",
        "default wan0",
        "192.0.2.0/24 wan0",
        "203.0.113.0/24 wan0",
        "2001:db8:10::/64 wan0",
        "fe80::/64 wan0",
      ]);
    } finally {
      await peer("up");
    }
  });

  it("from the files: no ip run, multipath as its first nexthop, linkdown from the carrier", async () => {
    lab.ip(host, "route", "del", "unreachable", "198.18.0.0/15");
    const res = await fromFiles();
    expect(asFiles(res)).toEqual(asFiles(await call()));
    expect(res.routes.filter((x) => x.dst === "203.0.113.0/24")).toEqual([
      { dst: "203.0.113.0/24", via: "192.0.2.1", dev: "wan0", family: 4, metric: 0, type: "unicast", linkdown: false },
    ]);
    await peer("down");
    try {
      const down = await fromFiles();
      expect(asFiles(down)).toEqual(asFiles(await call()));
      expect(down.default_gateway).toEqual({
        via: "192.0.2.1",
        dev: "wan0",
        family: 4,
        linkdown: true,
        neighbor: "none",
      });
      expect(down.routes.filter((x) => x.linkdown).length).toBe(6);
    } finally {
      await peer("up");
    }
  });

  it("the gateway's ARP entry, read and never sent: known once it answered, incomplete when nothing does", async () => {
    // A datagram to the gateway itself makes the kernel ask for it; 192.0.2.1 (the router) answers.
    send("192.0.2.1");
    const known = await fromFiles();
    expect(known.default_gateway).toMatchObject({ via: "192.0.2.1", neighbor: "known" });
    expect((await call()).default_gateway?.neighbor).toBe("known");
    // A better default through an address nobody holds on wan1: no entry until something goes that way.
    lab.ip(host, "route", "add", "default", "via", "198.51.100.99", "dev", "wan1", "metric", "50");
    try {
      expect((await fromFiles()).default_gateway).toMatchObject({ via: "198.51.100.99", neighbor: "none" });
      send("100.64.0.1");
      const dead = await fromFiles();
      expect(dead.default_gateway).toMatchObject({ via: "198.51.100.99", dev: "wan1", neighbor: "incomplete" });
      expect(dead.summary).toMatch(/^default via 198\.51\.100\.99 dev wan1 \(IPv4\), the gateway has not answered ARP/);
      expect((await call()).default_gateway?.neighbor).toBe("incomplete");
    } finally {
      lab.ip(host, "route", "del", "default", "via", "198.51.100.99", "dev", "wan1", "metric", "50");
    }
  });
});
