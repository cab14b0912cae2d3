// iface_info against the real server running inside a network namespace this test builds: names,
// MACs, addresses and up/down are all set here, so they are asserted exactly.
import { createClient, type RoadNerdClient } from "@roadnerd/client";
import type { ResultOf } from "@roadnerd/conventions";
import { createNetnsLab, type NetnsLab, netnsSkipReason } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ifaceInfo } from "../../src/tools/iface-info.ts";

const skip = netnsSkipReason();

type IfaceInfo = ResultOf<typeof ifaceInfo>;

describe.skipIf(skip)(`iface_info in a network namespace${skip ? ` (skipped: ${skip})` : ""}`, () => {
  let lab: NetnsLab;
  let client: RoadNerdClient;
  let mgmtAddr: string;
  let host: string;

  beforeAll(async () => {
    lab = createNetnsLab();
    try {
      host = lab.addNs();
      const peer = lab.addNs();
      mgmtAddr = lab.linkToRoot(host).nsAddr;
      // Dual stack; the link-local address follows from the MAC (EUI-64).
      lab.veth(
        { ns: host, name: "wan0", mac: "02:52:4e:00:00:10", addrs: ["192.0.2.2/24", "2001:db8:10::2/64"] },
        { ns: peer, name: "wan0p", addrs: ["192.0.2.1/24"] },
      );
      // Up, with carrier, and no address of any kind.
      lab.veth(
        { ns: host, name: "bare0", mac: "02:52:4e:00:00:30", ipv6: "none" },
        { ns: peer, name: "bare0p", ipv6: "none" },
      );
      // Administratively down, with an address.
      lab.veth(
        { ns: host, name: "down0", mac: "02:52:4e:00:00:40", addrs: ["10.99.0.1/24"], up: false },
        { ns: peer, name: "down0p", ipv6: "none" },
      );
      // Up, but the cable is out: the peer is down, so no carrier.
      lab.veth(
        { ns: host, name: "lan0", mac: "02:52:4e:00:00:50", addrs: ["10.77.0.2/24"] },
        { ns: peer, name: "lan0p", up: false },
      );
      const served = await lab.serve(host, "network", { env: { HOST: mgmtAddr } });
      client = createClient(served.url, { token: served.token });
    } catch (err) {
      await lab.cleanup();
      throw err;
    }
  });

  afterAll(async () => {
    await lab?.cleanup();
  });

  it("lists every interface with exact MAC, addresses and state, including ones without an address", async () => {
    const res = await client.call<IfaceInfo>("iface_info");
    const byName = Object.fromEntries(res.interfaces.map((i) => [i.name, i]));
    expect(res.interfaces.map((i) => i.name)).toEqual(["lo", "mgmt0", "wan0", "bare0", "down0", "lan0"]);
    expect(byName.lo).toEqual({
      name: "lo",
      mac: null,
      ipv4: ["127.0.0.1/8"],
      ipv6: ["::1/128"],
      up: true,
      carrier: true,
      state: "UNKNOWN",
    });
    expect(byName.mgmt0).toMatchObject({ ipv4: [`${mgmtAddr}/30`], ipv6: [], up: true, carrier: true, state: "UP" });
    expect(byName.wan0).toEqual({
      name: "wan0",
      mac: "02:52:4e:00:00:10",
      ipv4: ["192.0.2.2/24"],
      ipv6: ["2001:db8:10::2/64", "fe80::52:4eff:fe00:10/64"],
      up: true,
      carrier: true,
      state: "UP",
    });
    expect(byName.bare0).toEqual({
      name: "bare0",
      mac: "02:52:4e:00:00:30",
      ipv4: [],
      ipv6: [],
      up: true,
      carrier: true,
      state: "UP",
    });
    expect(byName.down0).toEqual({
      name: "down0",
      mac: "02:52:4e:00:00:40",
      ipv4: ["10.99.0.1/24"],
      ipv6: [],
      up: false,
      carrier: false,
      state: "DOWN",
    });
    expect(byName.lan0).toEqual({
      name: "lan0",
      mac: "02:52:4e:00:00:50",
      ipv4: ["10.77.0.2/24"],
      ipv6: [],
      up: true,
      carrier: false,
      // The kernel looks the veth's peer up by ifindex in the *local* namespace to tell DOWN from
      // LOWERLAYERDOWN, so which one shows depends on unrelated interface numbering.
      state: expect.stringMatching(/^(DOWN|LOWERLAYERDOWN)$/),
    });
    expect(res).toMatchObject({ truncated: false, omitted: 0 });
    expect(res.summary).toBe(
      `6 interfaces, 4 up (not lo); IPv4: mgmt0 ${mgmtAddr}/30, wan0 192.0.2.2/24, lan0 10.77.0.2/24`,
    );
  });

  it("limit cuts the list and counts what it left out", async () => {
    const res = await client.call<IfaceInfo>("iface_info", { limit: 2 });
    expect(res.interfaces.map((i) => i.name)).toEqual(["lo", "mgmt0"]);
    expect(res).toMatchObject({ truncated: true, omitted: 4 });
  });

  it("a link taken down is seen on the next call, its addresses kept", async () => {
    lab.ip(host, "link", "set", "wan0", "down");
    const res = await client.call<IfaceInfo>("iface_info");
    const wan0 = res.interfaces.find((i) => i.name === "wan0");
    // IPv4 addresses survive a down link; the kernel drops the IPv6 ones (keep_addr_on_down=0).
    expect(wan0).toMatchObject({ up: false, carrier: false, state: "DOWN", ipv4: ["192.0.2.2/24"], ipv6: [] });
  });
});
