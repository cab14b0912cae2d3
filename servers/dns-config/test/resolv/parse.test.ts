/** resolv.conf read as glibc 2.36 reads it. */
import { describe, expect, it } from "vitest";
import { DEFAULT_OPTIONS, parseResolvConf } from "../../src/resolv/parse.ts";

describe("parseResolvConf", () => {
  it("the last search or domain line wins; domain keeps one word", () => {
    expect(parseResolvConf("search a.example b.example\ndomain c.example d.example\n").search).toEqual(["c.example"]);
    expect(parseResolvConf("domain c.example\nsearch a.example\tb.example\n").search).toEqual([
      "a.example",
      "b.example",
    ]);
  });

  it("keywords count only in the first column and followed by a blank", () => {
    const conf = parseResolvConf(
      " nameserver 192.0.2.1\nnameserver\t192.0.2.2\nnameservers 192.0.2.3\n#nameserver 192.0.2.4\n",
    );
    expect(conf.nameservers).toEqual(["192.0.2.2"]);
    expect(conf.comments).toEqual(["nameserver 192.0.2.4"]);
    expect(conf.warnings).toEqual(["indented line 1: glibc ignores a keyword not in the first column"]);
  });

  it("options add up, numbers capped as glibc caps them, read as atoi reads them", () => {
    const conf = parseResolvConf("options ndots:20 timeout:99\noptions attempts:x trust-ad no-aaaa use-vc inet6\r\n");
    expect(conf.options).toEqual({
      ...DEFAULT_OPTIONS,
      ndots: 15,
      timeout: 30,
      attempts: 0,
      trust_ad: true,
      no_aaaa: true,
      use_vc: true,
    });
    expect(conf.options_raw).toEqual([
      "ndots:20",
      "timeout:99",
      "attempts:x",
      "trust-ad",
      "no-aaaa",
      "use-vc",
      "inet6",
    ]);
    expect(conf.warnings).toEqual([]);
  });

  it("IPv6 nameservers keep their scope; names and junk are refused", () => {
    const conf = parseResolvConf(
      "nameserver fe80::1%wlan0\nnameserver 2001:db8::1\nnameserver 192.0.2.300\nnameserver dns.example\n",
    );
    expect(conf.nameservers).toEqual(["fe80::1%wlan0", "2001:db8::1"]);
    expect(conf.warnings).toEqual(["nameserver not an IP address, ignored: 192.0.2.300, dns.example"]);
  });
});
