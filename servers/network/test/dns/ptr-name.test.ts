import { describe, expect, it } from "vitest";
import { expandIPv6, ptrName } from "../../src/dns/ptr-name.ts";

describe("ptrName", () => {
  it("reverses IPv4 octets under in-addr.arpa", () => {
    expect(ptrName("192.0.2.10")).toBe("10.2.0.192.in-addr.arpa");
    expect(ptrName("127.0.0.1")).toBe("1.0.0.127.in-addr.arpa");
  });

  it("writes IPv6 as 32 reversed nibbles under ip6.arpa", () => {
    expect(ptrName("2001:db8::1")).toBe("1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa");
    expect(ptrName("::1")).toBe(`1${".0".repeat(31)}.ip6.arpa`);
  });

  it("handles upper case, a zone id and an embedded IPv4 tail", () => {
    expect(ptrName("2001:DB8::1")).toBe(ptrName("2001:db8::1"));
    expect(ptrName("fe80::1%eth0")).toBe(`1${".0".repeat(27)}.0.8.e.f.ip6.arpa`);
    expect(ptrName("::ffff:192.0.2.1")).toBe(`1.0.2.0.0.0.0.c.f.f.f.f${".0".repeat(20)}.ip6.arpa`);
  });

  it("returns null for names", () => {
    expect(ptrName("example.com")).toBeNull();
    expect(ptrName("10.2.0.192.in-addr.arpa")).toBeNull();
  });
});

describe("expandIPv6", () => {
  it("expands :: in any position", () => {
    expect(expandIPv6("::")).toBe("0000:0000:0000:0000:0000:0000:0000:0000");
    expect(expandIPv6("2001:db8::")).toBe("2001:0db8:0000:0000:0000:0000:0000:0000");
    expect(expandIPv6("1:2:3:4:5:6:7:8")).toBe("0001:0002:0003:0004:0005:0006:0007:0008");
    expect(expandIPv6("::ffff:192.0.2.1")).toBe("0000:0000:0000:0000:0000:ffff:c000:0201");
  });
});
