// Parser tests against `ip -j addr show` recorded from a real kernel (fixtures/record.sh).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseIpAddr } from "../../src/parse/ip-addr.ts";

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), "utf8");

describe("parseIpAddr", () => {
  it("reads every interface: loopback, dual-stack, IPv4-only, no address, admin down, no carrier", () => {
    expect(parseIpAddr(fixture("ip-addr.json"))).toEqual([
      { name: "lo", mac: null, ipv4: ["127.0.0.1/8"], ipv6: ["::1/128"], up: true, carrier: true, state: "UNKNOWN" },
      {
        name: "wan0",
        mac: "02:52:4e:00:00:10",
        ipv4: ["192.0.2.2/24"],
        ipv6: ["2001:db8:10::2/64", "fe80::52:4eff:fe00:10/64"],
        up: true,
        carrier: true,
        state: "UP",
      },
      {
        name: "wan1",
        mac: "02:52:4e:00:00:20",
        ipv4: ["198.51.100.2/24"],
        ipv6: [],
        up: true,
        carrier: true,
        state: "UP",
      },
      { name: "bare0", mac: "02:52:4e:00:00:30", ipv4: [], ipv6: [], up: true, carrier: true, state: "UP" },
      {
        name: "down0",
        mac: "02:52:4e:00:00:40",
        ipv4: ["10.99.0.1/24"],
        ipv6: [],
        up: false,
        carrier: false,
        state: "DOWN",
      },
      {
        name: "lan0",
        mac: "02:52:4e:00:00:50",
        ipv4: ["10.77.0.2/24"],
        ipv6: [],
        up: true,
        carrier: false,
        state: "DOWN",
      },
    ]);
  });

  it("treats empty output as no interfaces", () => {
    expect(parseIpAddr("")).toEqual([]);
    expect(parseIpAddr("[]")).toEqual([]);
  });
});
