// iface_info answers from /proc, /sys and getifaddrs, with no `ip` process, exactly as `ip -j addr` would
// (compared in the same namespace); and spawns `ip` when those files cannot say it exactly (a link that is down).
// The server runs with an EXEC_PATH holding no `ip`: any fallback shows as E_NO_BINARY.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type RoadNerdClient } from "@roadnerd/client";
import type { ResultOf } from "@roadnerd/conventions";
import { createNetnsLab, type NetnsLab, netnsSkipReason } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseIpAddr } from "../../src/parse/ip-addr.ts";
import type { ifaceInfo } from "../../src/tools/iface-info.ts";

const skip = netnsSkipReason();

type IfaceInfo = ResultOf<typeof ifaceInfo>;

describe.skipIf(skip)(`iface_info from the kernel's files${skip ? ` (skipped: ${skip})` : ""}`, () => {
  let lab: NetnsLab;
  let client: RoadNerdClient;
  let host: string;
  let emptyPath: string;

  beforeAll(async () => {
    emptyPath = await mkdtemp(join(tmpdir(), "rn-noip-"));
    lab = createNetnsLab();
    try {
      host = lab.addNs();
      const peer = lab.addNs();
      const mgmt = lab.linkToRoot(host).nsAddr;
      lab.veth(
        { ns: host, name: "wan0", mac: "02:52:4e:00:00:10", addrs: ["192.0.2.2/24", "2001:db8:10::2/64"] },
        { ns: peer, name: "wan0p", addrs: ["192.0.2.1/24"] },
      );
      // A secondary address with a label: getifaddrs names it wan0:1, `ip` lists it under wan0.
      lab.exec(host, ["ip", "addr", "add", "192.0.2.3/24", "dev", "wan0", "label", "wan0:1"]);
      lab.veth({ ns: host, name: "bare0", ipv6: "none" }, { ns: peer, name: "bare0p", ipv6: "none" });
      // Up without carrier and without addresses: listed by /sys alone.
      lab.veth({ ns: host, name: "lan0", ipv6: "none" }, { ns: peer, name: "lan0p", up: false, ipv6: "none" });
      const served = await lab.serve(host, "network", { env: { HOST: mgmt, EXEC_PATH: emptyPath } });
      client = createClient(served.url, { token: served.token });
    } catch (err) {
      await lab.cleanup();
      throw err;
    }
  });

  afterAll(async () => {
    await lab?.cleanup();
    await rm(emptyPath, { recursive: true, force: true });
  });

  it("equals `ip -j addr show` in the same namespace, with no ip to run", async () => {
    const res = await client.call<IfaceInfo>("iface_info");
    const ip = parseIpAddr(lab.exec(host, ["ip", "-j", "addr", "show"]));
    expect(res.interfaces).toEqual(ip);
    expect(res.interfaces.map((i) => i.name)).toEqual(["lo", "mgmt0", "wan0", "bare0", "lan0"]);
    expect(res.interfaces.find((i) => i.name === "wan0")?.ipv4).toEqual(["192.0.2.2/24", "192.0.2.3/24"]);
    expect(res.interfaces.find((i) => i.name === "lan0")).toMatchObject({ up: true, carrier: false });
  });

  it("spawns ip when a link is down with an address (no file lists it): here, no ip → E_NO_BINARY", async () => {
    lab.exec(host, ["ip", "link", "set", "bare0", "down"]);
    lab.exec(host, ["ip", "addr", "add", "10.99.0.1/24", "dev", "bare0"]);
    const failed = await client.call<IfaceInfo>("iface_info").then(
      () => "answered",
      (e: { code?: string }) => e.code,
    );
    expect(failed).toBe("E_NO_BINARY");
  });
});
