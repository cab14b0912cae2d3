/**
 * The outbound policy decides on the address actually used, before any packet: IP literals in every
 * spelling a URL parser accepts, IPv4-mapped and NAT64 IPv6, metadata and link-local, OUTBOUND_ALLOW and
 * OUTBOUND_DENY with CIDRs and names. The resolver and net.connect are spies here: a denied target must
 * never reach either, and the only connections made go to a loopback server this test starts.
 */
import { isIP } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { diagRoutes, OK_BODY, startTestServer, type TestServer } from "../../../testkit/src/index.ts";
import { dial } from "../../src/outbound/dial.ts";
import { httpRequest } from "../../src/outbound/http-probe.ts";
import { createOutboundPolicy, unwrapIPv4 } from "../../src/outbound/index.ts";
import { DEFAULT_DENY, defaultDenyFamily } from "../../src/outbound/policy.ts";
import { portOf } from "../../src/outbound/port-of.ts";

const FAKE_DNS: Record<string, string[]> = {
  "loop.test": ["127.0.0.1"],
  "two.test": ["127.0.0.2"],
  "meta.test": ["169.254.169.254"],
  "mixed.test": ["127.0.0.1", "169.254.169.254"],
  "mapped.test": ["::ffff:169.254.169.254"],
};

const spies = vi.hoisted(() => ({ lookup: [] as string[], connect: [] as string[] }));

vi.mock("node:dns/promises", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:dns/promises")>();
  const lookup = async (name: string) => {
    spies.lookup.push(name);
    const addresses = FAKE_DNS[name];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return { ...actual, lookup, default: { ...actual, lookup } };
});

vi.mock("node:net", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:net")>();
  const connect = (...args: Parameters<typeof actual.connect>) => {
    const opts = args[0] as { host?: string };
    spies.connect.push(String(opts.host));
    return actual.connect(...args);
  };
  return { ...actual, connect, default: { ...actual, connect } };
});

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer(diagRoutes());
});
afterAll(() => server?.close());
beforeEach(() => {
  spies.lookup.length = 0;
  spies.connect.length = 0;
});

const policyOf = (allow: string[] = [], deny: string[] = []) => createOutboundPolicy({ allow, deny });
const hostOf = (url: string) => new URL(url).hostname;

/**
 * Denied by the decision alone (resolveTarget cannot send a packet), then refused by the kernel's dial (plain
 * and TLS) and by the probe path built on it, with nothing dialled. The decision comes first so that a policy
 * that wrongly allows never reaches a connection.
 */
async function expectDeniedBeforeAnyPacket(policy: ReturnType<typeof policyOf>, url: string, message: RegExp) {
  const denied = { code: "E_FORBIDDEN", message: expect.stringMatching(message) };
  await expect(policy.resolveTarget(hostOf(url))).rejects.toMatchObject(denied);
  const target = { host: hostOf(url), port: portOf(new URL(url)), signal: new AbortController().signal };
  await expect(dial(policy, target)).rejects.toMatchObject(denied);
  await expect(dial(policy, { ...target, tls: {} })).rejects.toMatchObject(denied);
  await expect(httpRequest(policy, url)).rejects.toMatchObject(denied);
  expect(spies.connect).toEqual([]);
}

describe("IP literals a lookup-only guard would miss", () => {
  const loopbackSpellings = [
    "http://127.1/",
    "http://0x7f000001/",
    "http://2130706433/",
    "http://0177.0.0.1/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
  ];
  it.each(loopbackSpellings)("%s is 127.0.0.1 to the policy: denied by OUTBOUND_DENY 127.0.0.0/8", async (url) => {
    await expectDeniedBeforeAnyPacket(policyOf([], ["127.0.0.0/8"]), url, /OUTBOUND_DENY: 127\.0\.0\.1$/);
    expect(spies.lookup).toEqual([]);
  });

  it.each(loopbackSpellings)("%s is outside OUTBOUND_ALLOW=10.0.0.0/8", async (url) => {
    await expectDeniedBeforeAnyPacket(policyOf(["10.0.0.0/8"]), url, /not in OUTBOUND_ALLOW: 127\.0\.0\.1$/);
  });

  const metadataSpellings = [
    "http://169.254.169.254/latest/meta-data/",
    "http://[::ffff:169.254.169.254]/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://0xa9fea9fe/",
    "http://2852039166/",
    "http://169.254.43518/",
  ];
  it.each(metadataSpellings)("%s is cloud metadata: denied by default", async (url) => {
    await expectDeniedBeforeAnyPacket(
      policyOf(),
      url,
      /cloud metadata, link-local or unroutable\): 169\.254\.169\.254$/,
    );
    expect(spies.lookup).toEqual([]);
  });

  it.each([
    ["http://[fe80::1]/", "fe80::1"],
    ["http://[fd00:ec2::254]/", "fd00:ec2::254"],
    ["http://100.100.100.200/", "100.100.100.200"],
    ["http://0.0.0.0/", "0.0.0.0"],
    ["http://0/", "0.0.0.0"],
    ["http://[::]/", "::"],
    ["http://224.0.0.1/", "224.0.0.1"],
    ["http://255.255.255.255/", "255.255.255.255"],
  ])("%s is denied by default (link-local, metadata, unroutable)", async (url, ip) => {
    await expectDeniedBeforeAnyPacket(policyOf(), url, new RegExp(`\\): ${ip.replace(/[.:]/g, "\\$&")}$`));
  });

  it("a loopback literal is allowed by default and the connection goes to exactly that address", async () => {
    const r = await httpRequest(policyOf(), `http://127.1:${server.port}/ok`);
    expect(r.ok && r.response.body).toBe(OK_BODY);
    expect(spies.connect).toEqual(["127.0.0.1"]);
    expect(spies.lookup).toEqual([]);
  });
});

describe("names: every resolved address is judged, the connection is pinned", () => {
  it("a name resolving to metadata is denied after the lookup, before any connect", async () => {
    await expectDeniedBeforeAnyPacket(policyOf(), "http://meta.test/", /meta\.test \(169\.254\.169\.254\)$/);
    // Once per decision (the policy, the dial plain and TLS, the probe): the fake resolver only.
    expect(spies.lookup).toEqual(["meta.test", "meta.test", "meta.test", "meta.test"]);
  });

  it("one bad address among several is enough to deny", async () => {
    await expectDeniedBeforeAnyPacket(policyOf(), "http://mixed.test/", /mixed\.test \(169\.254\.169\.254\)$/);
  });

  it("an IPv4-mapped answer is unwrapped too", async () => {
    await expectDeniedBeforeAnyPacket(policyOf(), "http://mapped.test/", /mapped\.test \(169\.254\.169\.254\)$/);
  });

  it("a name on OUTBOUND_DENY (wildcard) is refused before any lookup", async () => {
    await expectDeniedBeforeAnyPacket(
      policyOf([], ["*.blocked.test"]),
      "http://a.b.blocked.test/",
      /OUTBOUND_DENY: a\.b\.blocked\.test$/,
    );
    expect(spies.lookup).toEqual([]);
  });

  it("an allowed name connects to the address it resolved to, never by name", async () => {
    const r = await httpRequest(policyOf(["loop.test"]), `http://loop.test:${server.port}/ok`);
    expect(r.ok && r.response.address).toBe("127.0.0.1");
    expect(spies.lookup).toEqual(["loop.test"]);
    expect(spies.connect).toEqual(["127.0.0.1"]);
  });

  it("OUTBOUND_ALLOW by name does not let another name in (refused before its lookup)", async () => {
    await expectDeniedBeforeAnyPacket(policyOf(["loop.test"]), "http://two.test/", /not in OUTBOUND_ALLOW: two\.test$/);
  });
});

describe("the dial through a proxy: the target named in CONNECT is judged before the proxy is dialled", () => {
  const viaProxy = (policy: ReturnType<typeof policyOf>, url: string) =>
    dial(policy, {
      host: hostOf(url),
      port: portOf(new URL(url)),
      signal: new AbortController().signal,
      tls: {},
      proxy: { host: "127.0.0.1", port: server.port },
    });

  it.each([
    "http://169.254.169.254/latest/meta-data/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://0xa9fea9fe/",
    "http://2852039166/",
    "http://[fe80::1]/",
    "http://metadata.google.internal/",
  ])("%s: E_FORBIDDEN, no lookup, no connection to the proxy", async (url) => {
    const before = server.connections();
    await expect(viaProxy(policyOf(), url)).rejects.toMatchObject({ code: "E_FORBIDDEN" });
    expect(spies.lookup).toEqual([]);
    expect(spies.connect).toEqual([]);
    expect(server.connections()).toBe(before);
  });

  it("a target outside OUTBOUND_ALLOW (a name a list of names leaves out, a literal) is refused the same way", async () => {
    for (const [allow, url] of [
      ["loop.test", "http://two.test/"],
      ["127.0.0.1/32", "http://127.0.0.2/"],
    ] as const) {
      await expect(viaProxy(policyOf([allow]), url)).rejects.toMatchObject({
        code: "E_FORBIDDEN",
        message: expect.stringContaining("not in OUTBOUND_ALLOW"),
      });
    }
    expect(spies.lookup).toEqual([]);
    expect(spies.connect).toEqual([]);
  });
});

describe("allowlist-only servers (proxy, webcheck)", () => {
  const only = (allow: string[] = []) => createOutboundPolicy({ allow, deny: [], allowlistOnly: "demo" });

  it("refuse every target, loopback included, until OUTBOUND_ALLOW names one, naming the variable", async () => {
    for (const url of [`http://127.0.0.1:${server.port}/ok`, "http://loop.test/", "http://[::1]/"]) {
      await expectDeniedBeforeAnyPacket(only(), url, /^demo reaches no target until OUTBOUND_ALLOW names it: /);
    }
    expect(spies.lookup).toEqual([]);
    expect(() => only().checkTarget("loop.test")).toThrow(
      expect.objectContaining({ hint: expect.stringContaining("OUTBOUND_ALLOW=") }),
    );
  });

  it("with a list, judge as any restricted policy; allowsName says which names the list names", async () => {
    const policy = only(["loop.test", "*.corp.test"]);
    await expect(policy.resolveTarget("loop.test")).resolves.toMatchObject({ address: "127.0.0.1" });
    expect(() => policy.checkTarget("two.test")).toThrow(/not in OUTBOUND_ALLOW: two\.test/);
    expect([policy.allowsName("LOOP.test."), policy.allowsName("a.corp.test"), policy.allowsName("corp.test")]).toEqual(
      [true, true, false],
    );
  });
});

describe("OUTBOUND_ALLOW / OUTBOUND_DENY with CIDRs", () => {
  it("ALLOW 127.0.0.2/32 lets 127.0.0.2 in and keeps 127.0.0.1 out", async () => {
    const policy = policyOf(["127.0.0.2/32"]);
    await expect(policy.resolveTarget("127.0.0.2")).resolves.toMatchObject({ address: "127.0.0.2", dnsMs: 0 });
    await expectDeniedBeforeAnyPacket(
      policy,
      `http://127.0.0.1:${server.port}/ok`,
      /not in OUTBOUND_ALLOW: 127\.0\.0\.1$/,
    );
  });

  it("DENY wins over ALLOW", async () => {
    await expectDeniedBeforeAnyPacket(
      policyOf(["127.0.0.0/8"], ["127.0.0.1/32"]),
      "http://127.0.0.1/",
      /OUTBOUND_DENY/,
    );
  });

  it("metadata stays denied when ALLOW is set but does not cover it", async () => {
    await expectDeniedBeforeAnyPacket(policyOf(["10.0.0.0/8"]), "http://169.254.169.254/", /not in OUTBOUND_ALLOW/);
  });

  // Regression: a catch-all ALLOW once reopened metadata and link-local (the default deny yielded to any
  // ALLOW range containing the address). Only an ALLOW entry inside a default-denied range reopens it.
  it("a catch-all ALLOW 0.0.0.0/0 or ::/0 does not open cloud metadata or link-local", async () => {
    for (const [allow, target] of [
      [["0.0.0.0/0"], "169.254.169.254"],
      [["0.0.0.0/0"], "::ffff:169.254.169.254"],
      [["::/0"], "fe80::1"],
      [["169.254.0.0/15"], "169.254.1.1"],
    ] as const) {
      await expect(policyOf([...allow]).resolveTarget(target)).rejects.toMatchObject({ code: "E_FORBIDDEN" });
    }
  });

  it("an ALLOW list of names only refuses other names before any lookup", async () => {
    // "localhost" would resolve from /etc/hosts; refusing it proves no lookup was needed to decide.
    await expect(policyOf(["api.example.test"]).resolveTarget("localhost")).rejects.toMatchObject({
      code: "E_FORBIDDEN",
      message: expect.stringContaining("not in OUTBOUND_ALLOW"),
    });
  });

  it("metadata is reachable only when ALLOW names that very range (decided, not dialled)", async () => {
    await expect(policyOf(["169.254.169.254/32"]).resolveTarget("169.254.169.254")).resolves.toMatchObject({
      address: "169.254.169.254",
    });
  });

  it("IPv6 CIDRs match IPv6 literals", async () => {
    await expect(policyOf([], ["2001:db8::/32"]).resolveTarget("[2001:db8::1]")).rejects.toMatchObject({
      code: "E_FORBIDDEN",
    });
  });

  it("a bad policy entry is rejected when the policy is built", () => {
    expect(() => policyOf(["10.0.0.0/33"])).toThrow(/bad CIDR/);
    expect(() => policyOf([], ["not a host!"])).toThrow(/bad entry/);
  });

  // Regression (attacker review, ADR 0063): these DENY entries were taken for host names or left unused, and
  // denied nothing; the same spellings as a target were judged as the address.
  it("a DENY entry means the address it spells, however spelled, with or without a port", async () => {
    for (const entry of ["0x0a090909", "168364297", "012.011.011.011", "10.592137", "10.9.9.9.", "10.9.9.9/32"]) {
      await expect(policyOf([], [entry]).resolveTarget("10.9.9.9"), entry).rejects.toMatchObject({
        code: "E_FORBIDDEN",
        message: expect.stringContaining("OUTBOUND_DENY"),
      });
    }
    // host:port: that port of that host (by address however written, or by name before any lookup), not others.
    for (const entry of ["10.9.9.9:8099", "0x0a090909:8099", "[::ffff:a09:909]:8099"]) {
      const policy = policyOf([], [entry]);
      await expect(policy.resolveTarget("10.9.9.9", undefined, 8099), entry).rejects.toMatchObject({
        code: "E_FORBIDDEN",
      });
      await expect(policy.resolveTarget("10.9.9.9", undefined, 8100), entry).resolves.toMatchObject({
        address: "10.9.9.9",
      });
    }
    await expect(policyOf([], ["own.test:80"]).resolveTarget("own.test", undefined, 80)).rejects.toMatchObject({
      code: "E_FORBIDDEN",
      message: expect.stringContaining("OUTBOUND_DENY"),
    });
  });

  it("a DENY entry of an IPv6 address that reaches an IPv4 one denies both", async () => {
    for (const entry of ["64:ff9b::a09:909", "2002:a09:909::1", "::10.9.9.9", "::ffff:10.9.9.9"]) {
      const policy = policyOf([], [entry]);
      await expect(policy.resolveTarget("10.9.9.9"), entry).rejects.toMatchObject({ code: "E_FORBIDDEN" });
      await expect(policy.resolveTarget(`[${entry}]`), entry).rejects.toMatchObject({ code: "E_FORBIDDEN" });
    }
    // A v6 range is matched as dialled too: NAT64's whole prefix.
    await expect(policyOf([], ["64:ff9b::/96"]).resolveTarget("[64:ff9b::a09:909]")).rejects.toMatchObject({
      code: "E_FORBIDDEN",
    });
  });

  it("an ALLOW entry is read as written: another spelling of metadata opens nothing", async () => {
    for (const entry of ["2852039166", "::ffff:169.254.169.254", "169.254.169.254."]) {
      await expect(policyOf([entry]).resolveTarget("169.254.169.254"), entry).rejects.toMatchObject({
        code: "E_FORBIDDEN",
      });
    }
  });
});

describe("trusting: an address the machine's own configuration names", () => {
  it("is reachable whatever the rules, in every spelling; nothing else changes, nor does the policy it came from", async () => {
    const strict = policyOf(["10.0.0.0/8"], ["169.254.0.0/16"]);
    const resolver = strict.trusting("169.254.169.253");
    for (const ip of ["169.254.169.253", "::ffff:169.254.169.253", "[::ffff:a9fe:a9fd]"]) {
      expect(() => resolver.checkTarget(ip, 53), ip).not.toThrow();
      await expect(resolver.resolveTarget(ip, undefined, 53)).resolves.toMatchObject({ address: expect.any(String) });
    }
    expect(() => resolver.checkAddress("169.254.169.254")).toThrow(/denied/);
    expect(() => resolver.checkAddress("127.0.0.1")).toThrow(/not in OUTBOUND_ALLOW/);
    expect(() => strict.checkAddress("169.254.169.253")).toThrow(/denied/);
  });

  it("keeps the server's own address refused", () => {
    const policy = policyOf();
    policy.setSelf("127.0.0.1", 7101);
    expect(() => policy.trusting("10.0.0.53").checkAddress("127.0.0.1", undefined, 7101)).toThrow(/this server itself/);
  });
});

describe("IPv6 spellings that carry an IPv4 address (regression: the text form was matched, not the address)", () => {
  it.each([
    ["::ffff:169.254.169.254", "169.254.169.254"],
    ["::ffff:a9fe:a9fe", "169.254.169.254"],
    ["64:ff9b:0:0:0:0:a9fe:a9fe", "169.254.169.254"],
    ["64:ff9b::a9fe:a9fe%eth0", "169.254.169.254"],
    ["::a00:1", "10.0.0.1"],
    ["::ffff:0:10.0.0.1", "10.0.0.1"],
    ["::1", "::1"],
    ["fe80::1%eth0", "fe80::1"],
    ["2001:db8::1", "2001:db8::1"],
    // Regression (issue 18): 6to4 and Teredo were judged as IPv6 and let through.
    ["2002:a9fe:a9fe::1", "169.254.169.254"],
    ["2002:0a00:0001:1::", "10.0.0.1"],
    ["2001:0:4136:e378:8000:63bf:5601:5601", "169.254.169.254"],
    ["2001::f5ff:fffe", "10.0.0.1"],
  ])("%s is judged as %s", (ip, judged) => {
    expect(unwrapIPv4(ip)).toBe(judged);
  });

  it.each([
    "64:ff9b:0:0:0:0:a9fe:a9fe",
    "64:ff9b::a9fe:a9fe%eth0",
    "64:ff9b:1::a00:1",
    "::a00:1",
    "::ffff:0:10.0.0.1",
    "2002:a00:1::1",
    "2001::f5ff:fffe",
  ])("%s is denied by OUTBOUND_DENY=10.0.0.0/8 and the default metadata rule, with no packet", (ip) => {
    expect(() => policyOf([], ["10.0.0.0/8"]).checkAddress(ip)).toThrow(/denied/);
  });
});

describe("the default deny list", () => {
  it("is read without net's IPv6 expression: each entry's family is the one isIP says (0: a name)", () => {
    const families = DEFAULT_DENY.map((entry) => {
      const addr = entry.split("/")[0] ?? "";
      expect(defaultDenyFamily(addr), entry).toBe(isIP(addr));
      return isIP(addr);
    });
    // The list holds all three kinds, so each branch was compared.
    expect(new Set(families)).toEqual(new Set([0, 4, 6]));
  });
});
