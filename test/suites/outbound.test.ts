/**
 * The outbound policy against an independent oracle, and the SSRF corpus against the kernel's dial and every
 * open-world tool.
 *
 * 1. For any generated IPv4 or IPv6 address, in any spelling (compressed, expanded, upper case, dotted tails,
 *    zone ids, IPv4 embedded as mapped, compatible, SIIT or NAT64), the policy's default verdict equals the
 *    oracle's: the IANA special-purpose registries with our decision for each range, plus the metadata table,
 *    computed here with BigInt arithmetic and no code shared with the policy. The dial agrees: it refuses what
 *    the oracle denies before any connect, and connects to exactly the address it was given otherwise.
 * 2. The dial (plain, TLS, and through a proxy) refuses every spelling of every metadata target before any
 *    lookup or connect; every tool or stream that reaches out (openWorld) refuses them in every target field it
 *    declares, before any work starts: 403 E_FORBIDDEN (or 400 for a spelling its schema refuses), never a result.
 *
 * While the dial is tested directly, node:net's connect and node:dns/promises' lookup are replaced by fakes that
 * record their argument and fail at once: no packet and no query leaves, whatever the dial decides.
 */
import { DialError, dial, portOf } from "@roadnerd/conventions";
import { createOutboundPolicy } from "@roadnerd/conventions/internal";
import { testApp } from "@roadnerd/conventions/testing";
import { loadServer, selectedServers } from "@roadnerd/registry";
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { type World, worldFor } from "./lib/worlds.ts";

// ---- fakes for the dial: record, never send ------------------------------------------------------------

const fake = vi.hoisted(() => ({ on: false, connects: [] as string[], lookups: [] as string[] }));

vi.mock("node:net", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:net")>();
  const connect = (...args: Parameters<typeof actual.connect>) => {
    if (!fake.on) return actual.connect(...args);
    fake.connects.push(String((args[0] as { host?: string }).host));
    // A socket that never opens: refused at once, as a closed port would be.
    const socket = new actual.Socket();
    process.nextTick(() => socket.destroy(Object.assign(new Error("refused (fake)"), { code: "ECONNREFUSED" })));
    return socket;
  };
  return { ...actual, connect, default: { ...actual, connect } };
});

vi.mock("node:dns/promises", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:dns/promises")>();
  const lookup: typeof actual.lookup = (async (name: string, options?: unknown) => {
    if (!fake.on) return actual.lookup(name, options as never);
    fake.lookups.push(name);
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name} (fake)`), { code: "ENOTFOUND" });
  }) as typeof actual.lookup;
  return { ...actual, lookup, default: { ...actual, lookup } };
});

function withFakes(): void {
  beforeEach(() => {
    fake.on = true;
    fake.connects.length = 0;
    fake.lookups.length = 0;
  });
  afterEach(() => {
    fake.on = false;
  });
}

// ---- the oracle ----------------------------------------------------------------------------------------

function v4(ip: string): bigint {
  return ip.split(".").reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

/** Our own IPv6 parser: groups, "::", a dotted tail; returns the 128-bit value. */
function v6(ip: string): bigint {
  const bare = ip.replace(/%.*$/, "").toLowerCase();
  let head = bare;
  let tailV4: bigint | undefined;
  const lastColon = bare.lastIndexOf(":");
  if (bare.slice(lastColon + 1).includes(".")) {
    tailV4 = v4(bare.slice(lastColon + 1));
    head = `${bare.slice(0, lastColon + 1)}0:0`;
  }
  const [l = "", r] = head.split("::");
  const left = l ? l.split(":") : [];
  const right = r === undefined ? [] : r ? r.split(":") : [];
  const groups = [...left, ...Array(8 - left.length - right.length).fill("0"), ...right].map((g) => BigInt(`0x${g}`));
  let value = groups.reduce((acc, g) => (acc << 16n) | g, 0n);
  if (tailV4 !== undefined) value = (value & ~0xffffffffn) | tailV4;
  return value;
}

interface Range {
  base: bigint;
  bits: number;
  width: 32 | 128;
}

const range = (cidr: string): Range => {
  const [addr = "", bits = ""] = cidr.split("/");
  const width = addr.includes(":") ? 128 : 32;
  return { base: width === 32 ? v4(addr) : v6(addr), bits: Number(bits), width };
};
const inRange = (value: bigint, r: Range) => value >> BigInt(r.width - r.bits) === r.base >> BigInt(r.width - r.bits);

/**
 * IANA IPv4 and IPv6 Special-Purpose Address Registries (2026), with what the policy must do by default.
 * Reachable on purpose: loopback, private and shared ranges (a laptop's LAN, its router, its VPN are what
 * gets diagnosed), documentation and benchmarking ranges (test networks), 6to4, Teredo, ULA.
 */
const IANA: ReadonlyArray<[string, "deny" | "allow", string]> = [
  ["0.0.0.0/8", "deny", "this network"],
  ["10.0.0.0/8", "allow", "private"],
  ["100.64.0.0/10", "allow", "shared address space (CGNAT)"],
  ["127.0.0.0/8", "allow", "loopback"],
  ["169.254.0.0/16", "deny", "link-local (cloud metadata)"],
  ["172.16.0.0/12", "allow", "private"],
  ["192.0.0.0/24", "allow", "IETF protocol assignments"],
  ["192.0.2.0/24", "allow", "TEST-NET-1"],
  ["192.88.99.0/24", "allow", "6to4 relay anycast (deprecated)"],
  ["192.168.0.0/16", "allow", "private"],
  ["198.18.0.0/15", "allow", "benchmarking"],
  ["198.51.100.0/24", "allow", "TEST-NET-2"],
  ["203.0.113.0/24", "allow", "TEST-NET-3"],
  ["224.0.0.0/4", "deny", "multicast"],
  ["240.0.0.0/4", "allow", "reserved (fails at connect)"],
  ["255.255.255.255/32", "deny", "limited broadcast"],
  ["::/128", "deny", "unspecified"],
  ["::1/128", "allow", "loopback"],
  ["64:ff9b:1::/48", "deny", "NAT64 local-use"],
  ["100::/64", "allow", "discard-only"],
  ["2001::/23", "allow", "IETF protocol assignments"],
  ["2001:db8::/32", "allow", "documentation"],
  ["2002::/16", "allow", "6to4"],
  ["fc00::/7", "allow", "unique local"],
  ["fe80::/10", "deny", "link-local"],
  ["ff00::/8", "deny", "multicast"],
];

/** Cloud metadata outside link-local (docs/security.md lists each with its source). */
const METADATA = [
  "168.63.129.16/32",
  "192.0.0.192/32",
  "100.100.100.200/32",
  "100.96.0.96/32",
  "fd00:ec2::254/128",
  "fd00:ec2::253/128",
  "fd00:ec2::123/128",
  "fd00:ec2::23/128",
  "fd00:a9fe:a9fe::1/128",
  "fd00:42::42/128",
  "fd20:ce::254/128",
];

const DENY = [...IANA.filter(([, d]) => d === "deny").map(([c]) => c), ...METADATA].map(range);

/** The IPv4 an IPv6 address carries (mapped, SIIT, compatible, NAT64 well-known), if any. */
function embedded(value: bigint): bigint | undefined {
  const high96 = value >> 32n;
  const low = value & 0xffffffffn;
  if (high96 === 0xffffn) return low; // ::ffff:0:0/96
  if (value >> 32n === 0xffff0000n) return low; // ::ffff:0:0:0/96 (SIIT)
  if (high96 === 0n && low > 1n) return low; // ::/96 compatible (not :: or ::1)
  if (value >> 32n === 0x64ff9b0000000000000000n) return low; // 64:ff9b::/96
  if (value >> 112n === 0x2002n) return (value >> 80n) & 0xffffffffn; // 6to4 (RFC 3056): the relay's IPv4 target
  if (value >> 96n === 0x20010000n) return low ^ 0xffffffffn; // Teredo (RFC 4380): the client's IPv4, bits flipped
  return undefined;
}

function oracleDenies(ip: string): boolean {
  if (!ip.includes(":")) return DENY.some((r) => r.width === 32 && inRange(v4(ip), r));
  const value = v6(ip);
  const inner = embedded(value);
  if (inner !== undefined) return DENY.some((r) => r.width === 32 && inRange(inner, r));
  return DENY.some((r) => r.width === 128 && inRange(value, r));
}

// ---- generators ----------------------------------------------------------------------------------------

const fmt4 = (n: bigint) => [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 255n)).join(".");
const groups = (n: bigint) => Array.from({ length: 8 }, (_, i) => (n >> BigInt(112 - 16 * i)) & 0xffffn);

const spell6 = fc.constantFrom<(n: bigint) => string>(
  (n) =>
    groups(n)
      .map((g) => g.toString(16))
      .join(":"),
  (n) =>
    groups(n)
      .map((g) => g.toString(16).padStart(4, "0"))
      .join(":")
      .toUpperCase(),
  (n) =>
    new URL(
      `http://[${groups(n)
        .map((g) => g.toString(16))
        .join(":")}]/`,
    ).hostname.slice(1, -1),
  (n) =>
    `${groups(n)
      .slice(0, 6)
      .map((g) => g.toString(16))
      .join(":")}:${fmt4(n & 0xffffffffn)}`,
  (n) =>
    `${groups(n)
      .map((g) => g.toString(16))
      .join(":")}%eth0`,
);

const anyV4 = fc.bigInt({ min: 0n, max: 0xffffffffn });
const nearRanges4 = fc
  .tuple(
    fc.constantFrom(
      ...DENY.filter((r) => r.width === 32),
      ...IANA.map(([c]) => range(c)).filter((r) => r.width === 32),
    ),
    fc.bigInt({ min: -2n, max: 300n }),
  )
  .map(([r, off]) => {
    const size = 1n << BigInt(32 - r.bits);
    const pick = off < 0n ? r.base + off : off > 256n ? r.base + size - 1n + (off - 299n) : r.base + (off % size);
    return ((pick % 0x100000000n) + 0x100000000n) % 0x100000000n;
  });
const v4Value = fc.oneof(anyV4, nearRanges4);

const wraps = fc.constantFrom(0xffff00000000n, 0xffff0000n << 32n, 0n, 0x64ff9b0000000000000000n << 0n);
const v6Value = fc.oneof(
  fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }),
  fc
    .tuple(
      fc.constantFrom(
        ...DENY.filter((r) => r.width === 128),
        ...IANA.map(([c]) => range(c)).filter((r) => r.width === 128),
      ),
      fc.bigInt({ min: 0n, max: 0xffffn }),
    )
    .map(([r, off]) => r.base + (off % (1n << BigInt(Math.min(16, 128 - r.bits))))),
  fc
    .tuple(wraps, v4Value)
    .map(([prefix, inner]) => (prefix === 0x64ff9b0000000000000000n ? (prefix << 32n) | inner : prefix | inner)),
);

// ---- 1. the policy agrees with the oracle ----------------------------------------------------------------

describe("outbound policy vs the IANA tables and the metadata table", () => {
  const policy = createOutboundPolicy({ allow: [], deny: [] });
  const denied = (ip: string) => {
    try {
      policy.checkAddress(ip);
      return false;
    } catch (err) {
      if ((err as { code?: string }).code !== "E_FORBIDDEN") throw err;
      return true;
    }
  };
  const runs = Number(process.env.OUTBOUND_RUNS ?? 20_000);

  it(`IPv4: ${runs} addresses, ranges and their edges`, () => {
    fc.assert(
      fc.property(v4Value, (n) => {
        const ip = fmt4(n);
        expect(denied(ip), ip).toBe(oracleDenies(ip));
      }),
      { numRuns: runs },
    );
  });

  it(`IPv6: ${runs} addresses in every spelling, IPv4 embedded four ways`, () => {
    fc.assert(
      fc.property(v6Value, spell6, (n, spell) => {
        const ip = spell(n);
        expect(denied(ip), ip).toBe(oracleDenies(ip));
      }),
      { numRuns: runs },
    );
  });

  it("the oracle itself: the addresses everyone knows", () => {
    for (const ip of [
      "169.254.169.254",
      "::ffff:169.254.169.254",
      "64:ff9b::a9fe:a9fe",
      "fd00:ec2::254",
      "168.63.129.16",
    ]) {
      expect(oracleDenies(ip), ip).toBe(true);
    }
    // Verdicts only, no packet: loopback, private ranges and documentation addresses stand for the allowed rest.
    for (const ip of ["127.0.0.1", "192.168.1.1", "10.0.0.1", "::1", "2001:db8::1111", "203.0.113.8"]) {
      expect(oracleDenies(ip), ip).toBe(false);
    }
  });
});

describe("the kernel's dial vs the same oracle", () => {
  withFakes();
  const policy = createOutboundPolicy({ allow: [], deny: [] });
  const runs = Math.ceil(Number(process.env.OUTBOUND_RUNS ?? 20_000) / 10);

  /** Denied: E_FORBIDDEN and no connect. Allowed: the fake refusal, from a connect to exactly this address. */
  async function dialVerdict(ip: string): Promise<"deny" | "allow"> {
    fake.connects.length = 0;
    const err = await dial(policy, { host: ip, port: 9, signal: new AbortController().signal }).then(
      () => new Error(`${ip}: the fake connect cannot succeed`),
      (e: unknown) => e,
    );
    if (err instanceof DialError) {
      expect(err.code, ip).toBe("E_CONN_REFUSED");
      expect(fake.connects, ip).toEqual([ip]);
      return "allow";
    }
    expect(err, ip).toMatchObject({ code: "E_FORBIDDEN" });
    expect(fake.connects, ip).toEqual([]);
    return "deny";
  }

  it(`IPv4: ${runs} addresses, ranges and their edges, dialled`, async () => {
    await fc.assert(
      fc.asyncProperty(v4Value, async (n) => {
        const ip = fmt4(n);
        expect(await dialVerdict(ip), ip).toBe(oracleDenies(ip) ? "deny" : "allow");
      }),
      { numRuns: runs },
    );
  });

  it(`IPv6: ${runs} addresses in every spelling, dialled`, async () => {
    await fc.assert(
      fc.asyncProperty(v6Value, spell6, async (n, spell) => {
        const ip = spell(n);
        expect(await dialVerdict(ip), ip).toBe(oracleDenies(ip) ? "deny" : "allow");
      }),
      { numRuns: runs },
    );
    expect(fake.lookups).toEqual([]);
  });
});

// ---- 2. the SSRF corpus against the dial and every open-world tool ---------------------------------------

/** Hosts: every spelling of metadata we know of. URL-only spellings (octal, hex, short) are in URL_HOSTS. */
const HOSTS = [
  "169.254.169.254",
  "2852039166",
  "0xa9fea9fe",
  "0251.0376.0251.0376",
  "169.254.43518",
  "169.254.170.2",
  "169.254.169.253",
  "168.63.129.16",
  "192.0.0.192",
  "100.100.100.200",
  "100.96.0.96",
  "0.0.0.0",
  "224.0.0.1",
  "255.255.255.255",
  "::ffff:169.254.169.254",
  "::ffff:a9fe:a9fe",
  "0:0:0:0:0:ffff:a9fe:a9fe",
  "::169.254.169.254",
  "::ffff:0:a9fe:a9fe",
  "64:ff9b::169.254.169.254",
  "64:ff9b::a9fe:a9fe",
  "64:ff9b:1::a9fe:a9fe",
  "fe80::1",
  "fe80::a9fe:a9fe",
  "FE80::A9FE:A9FE",
  "fd00:ec2::254",
  "fd00:ec2::253",
  "fd00:ec2::23",
  "FD00:EC2:0:0:0:0:0:254",
  "fd00:a9fe:a9fe::1",
  "fd00:42::42",
  "fd20:ce::254",
  "::",
  "ff02::1",
  "metadata.google.internal",
  "METADATA.GOOGLE.INTERNAL.",
  "metadata",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.tencentyun.com",
  "api.metadata.cloud.ibm.com",
];
const URL_HOSTS = [
  "2852039166",
  "0xa9fea9fe",
  "0xA9.0xFE.0xA9.0xFE",
  "0251.0376.0251.0376",
  "169.254.43518",
  "169.16689662",
  "0251.254.169.254",
  "[::ffff:169.254.169.254]",
  "[::ffff:a9fe:a9fe]",
  "[64:ff9b::a9fe:a9fe]",
  "[fd00:ec2::254]",
  "[fe80::a9fe:a9fe%25eth0]",
  "[::]",
  "0",
];

const urlHost = (h: string) => (h.includes(":") && !h.startsWith("[") ? `[${h}]` : h);

function corpus(kind: "url" | "host" | "ip"): string[] {
  if (kind === "url") {
    return [...HOSTS.map(urlHost), ...URL_HOSTS].flatMap((h) => [
      `http://${h}/latest/meta-data/`,
      `https://${h}/computeMetadata/v1/`,
      `http://user:pass@${h}:80/`,
    ]);
  }
  return kind === "ip" ? HOSTS.filter((h) => /^[\d.]+$|:/.test(h)) : HOSTS;
}

describe("SSRF corpus against the kernel's dial", () => {
  withFakes();
  const policies = {
    default: createOutboundPolicy({ allow: [], deny: [] }),
    "allow 0.0.0.0/0 and ::/0": createOutboundPolicy({ allow: ["0.0.0.0/0", "::/0"], deny: [] }),
  };
  /** Every host spelling: as a host field gives it, as written in a URL, and as a URL's hostname reads it. */
  const targets = [
    ...[...HOSTS, ...URL_HOSTS].map((host) => ({ host, port: 80 })),
    ...corpus("url")
      .filter((u) => URL.canParse(u))
      .map((u) => ({ host: new URL(u).hostname, port: portOf(new URL(u)) })),
  ];

  it.each(Object.entries(policies))(
    "%s policy: refused plain, with TLS and through a proxy, nothing sent",
    async (_, policy) => {
      let refused = 0;
      for (const target of targets) {
        const signal = new AbortController().signal;
        for (const extra of [{}, { tls: {} }, { tls: {}, proxy: { host: "127.0.0.1", port: 3128 } }]) {
          const err = await dial(policy, { ...target, signal, ...extra }).catch((e: unknown) => e);
          expect(err, `${target.host} ${JSON.stringify(extra)}`).toMatchObject({
            code: expect.stringMatching(/^E_(FORBIDDEN|INVALID_INPUT)$/),
          });
          refused += 1;
        }
      }
      expect(refused).toBe(targets.length * 3);
      expect(fake.lookups).toEqual([]);
      expect(fake.connects).toEqual([]);
    },
  );
});

const tally = { attempts: 0, forbidden: 0, invalid: 0 };

describe.each(selectedServers())("SSRF corpus against $name", (registered) => {
  let world: World | undefined;
  let app: Awaited<ReturnType<typeof testApp>>;

  beforeAll(async () => {
    world = await worldFor(registered);
    app = await testApp(await loadServer(registered.name), { env: world?.env ?? {} });
  });
  afterAll(async () => {
    await app?.close();
    await world?.close();
    console.log(
      `ssrf ${registered.name}: ${tally.attempts} attempts, ${tally.forbidden} E_FORBIDDEN, ${tally.invalid} E_INVALID_INPUT, 0 reached`,
    );
  });

  it("every open-world tool and stream declares its target fields", async () => {
    const def = await loadServer(registered.name);
    for (const t of [...def.tools, ...def.streams].filter((x) => x.openWorld)) {
      expect(Object.keys(t.targets ?? {}).length, t.name).toBeGreaterThan(0);
    }
  });

  it("every target field refuses every spelling before any work", async () => {
    const def = await loadServer(registered.name);
    const items = [
      ...def.tools.map((t) => ({ spec: t, stream: false })),
      ...def.streams.map((s) => ({ spec: s, stream: true })),
    ].filter((x) => x.spec.openWorld);
    for (const { spec, stream } of items) {
      for (const [field, kind] of Object.entries(spec.targets ?? {})) {
        for (const value of corpus(kind)) {
          tally.attempts += 1;
          const input = { ...(spec.example as Record<string, unknown>), [field]: value };
          const res = stream
            ? await app.inject({ url: `/sse/${spec.name}?${new URLSearchParams(input as Record<string, string>)}` })
            : await app.inject({ method: "POST", url: `/actions/${spec.name}`, payload: input });
          const code = res.json().error?.code;
          expect([403, 400], `${spec.name}.${field} = ${value}: ${res.statusCode} ${res.body.slice(0, 200)}`).toContain(
            res.statusCode,
          );
          if (code === "E_FORBIDDEN") tally.forbidden += 1;
          else tally.invalid += 1;
        }
      }
    }
  }, 60_000);
});
