/**
 * dns_resolve end to end: the built server, driven through @roadnerd/client, asking real DNS servers this
 * file starts on port 53 of its own loopback addresses (127.53.2.x; port 53 because `server` is an IP only).
 * Nothing here asks the machine's resolver: the spawned server's RESOLV_CONF points at 127.53.2.1.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type RoadNerdClient } from "@roadnerd/client";
import type { ResultOf } from "@roadnerd/conventions";
import { canBind } from "@roadnerd/conventions/testing";
import { type SpawnedServer, spawnServer, startDnsServer, type TestDnsServer } from "@roadnerd/testkit";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { dnsResolve } from "../../src/tools/dns-resolve.ts";
import { BIG_TXT, MISBEHAVE, ZONE } from "../helpers/dns-zone.ts";

const ZONE_IP = "127.53.2.1";
/** Nothing listens here: port unreachable. */
const CLOSED_IP = "127.53.2.2";
/** Listens, but OUTBOUND_DENY names it: it must never see a packet. */
const DENIED_IP = "127.53.2.3";

const bindable = await canBind(ZONE_IP, 53);
if (!bindable && process.env.CI === "true") throw new Error(`CI must be able to bind ${ZONE_IP}:53 (run as root)`);

type DnsResult = ResultOf<typeof dnsResolve>;

describe.skipIf(!bindable)("dns_resolve against a real DNS server on port 53 (needs root)", () => {
  let zone: TestDnsServer;
  let denied: TestDnsServer;
  let server: SpawnedServer;
  let client: RoadNerdClient;
  let dir: string;
  const resolve = (input: Record<string, unknown>) => client.call<DnsResult>("dns_resolve", input);
  const ask = (input: Record<string, unknown>) => resolve({ server: ZONE_IP, ...input });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "rn-dns-resolve-"));
    await writeFile(join(dir, "resolv.conf"), `# test resolver\nnameserver ${ZONE_IP}\nsearch example.test\n`);
    zone = await startDnsServer({ host: ZONE_IP, port: 53, records: ZONE, misbehave: MISBEHAVE });
    denied = await startDnsServer({ host: DENIED_IP, port: 53, records: ZONE });
    server = await spawnServer("network", {
      env: {
        RESOLV_CONF: join(dir, "resolv.conf"),
        OUTBOUND_ALLOW: "127.0.0.0/8",
        OUTBOUND_DENY: `${DENIED_IP}/32`,
      },
    });
    client = createClient(server.url);
  });

  afterAll(async () => {
    await server?.stop();
    await zone?.close();
    await denied?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    zone.queries.length = 0;
  });

  it("answers A with the TTLs from the wire", async () => {
    const r = await ask({ qname: "host.example.test" });
    expect(r).toEqual({
      qname: "host.example.test",
      type: "A",
      answers: [
        { name: "host.example.test", type: "A", ttl: 60, data: "192.0.2.10" },
        { name: "host.example.test", type: "A", ttl: 60, data: "192.0.2.11" },
      ],
      resolver: ZONE_IP,
      resolver_from: "input",
      rcode: "NOERROR",
      transport: "udp",
      query_ms: expect.any(Number),
      truncated: false,
      omitted: 0,
      summary: expect.stringMatching(
        /^host\.example\.test A → 192\.0\.2\.10, 192\.0\.2\.11 \(ttl 60s\); resolver 127\.53\.2\.1, \d+ ms$/,
      ),
    });
    expect(zone.queries).toEqual([{ transport: "udp", name: "host.example.test", type: "A", id: expect.any(Number) }]);
  });

  it("answers AAAA", async () => {
    const r = await ask({ qname: "host.example.test", type: "AAAA" });
    expect(r.answers).toEqual([{ name: "host.example.test", type: "AAAA", ttl: 90, data: "2001:db8::10" }]);
  });

  it("includes the whole CNAME chain before the addresses", async () => {
    const r = await ask({ qname: "www.example.test" });
    expect(r.answers).toEqual([
      { name: "www.example.test", type: "CNAME", ttl: 300, data: "web.example.test" },
      { name: "web.example.test", type: "CNAME", ttl: 120, data: "host.example.test" },
      { name: "host.example.test", type: "A", ttl: 60, data: "192.0.2.10" },
      { name: "host.example.test", type: "A", ttl: 60, data: "192.0.2.11" },
    ]);
    expect(r.summary).toContain("via CNAME web.example.test → host.example.test");
  });

  it("answers CNAME, MX, TXT and NS", async () => {
    expect((await ask({ qname: "www.example.test", type: "CNAME" })).answers).toEqual([
      { name: "www.example.test", type: "CNAME", ttl: 300, data: "web.example.test" },
    ]);
    expect((await ask({ qname: "example.test", type: "MX" })).answers).toEqual([
      { name: "example.test", type: "MX", ttl: 3600, data: "10 mail.example.test" },
      { name: "example.test", type: "MX", ttl: 3600, data: "20 backup.example.test" },
    ]);
    expect((await ask({ qname: "example.test", type: "TXT" })).answers).toEqual([
      { name: "example.test", type: "TXT", ttl: 120, data: "v=spf1 ip4:192.0.2.0/24 -all" },
    ]);
    expect((await ask({ qname: "example.test.", type: "NS" })).answers).toEqual([
      { name: "example.test", type: "NS", ttl: 86400, data: "ns1.example.test" },
      { name: "example.test", type: "NS", ttl: 86400, data: "ns2.example.test" },
    ]);
  });

  it("turns an IP into a PTR lookup of its reverse name", async () => {
    const v4 = await ask({ qname: "192.0.2.10" });
    expect(v4).toMatchObject({ qname: "192.0.2.10", type: "PTR", query_name: "10.2.0.192.in-addr.arpa" });
    expect(v4.answers).toEqual([{ name: "10.2.0.192.in-addr.arpa", type: "PTR", ttl: 900, data: "host.example.test" }]);
    const v6 = await ask({ qname: "2001:db8::10", type: "PTR" });
    expect(v6.answers).toEqual([
      {
        name: "0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa",
        type: "PTR",
        ttl: 901,
        data: "host.example.test",
      },
    ]);
    const named = await ask({ qname: "10.2.0.192.in-addr.arpa", type: "PTR" });
    expect(named.query_name).toBeUndefined();
    expect(named.answers.map((a) => a.data)).toEqual(["host.example.test"]);
  });

  it("tells NXDOMAIN, SERVFAIL and REFUSED apart", async () => {
    const nx = await ask({ qname: "nope.example.test" });
    expect(nx).toMatchObject({ answers: [], error: "E_DNS_FAIL", detail: "NXDOMAIN", rcode: "NXDOMAIN" });
    expect(nx.summary).toMatch(
      /^nope\.example\.test A failed: NXDOMAIN, the name does not exist \(resolver 127\.53\.2\.1/,
    );
    const sf = await ask({ qname: "servfail.example.test" });
    expect(sf).toMatchObject({ answers: [], error: "E_DNS_FAIL", detail: "SERVFAIL", rcode: "SERVFAIL" });
    const rf = await ask({ qname: "refused.example.test" });
    expect(rf).toMatchObject({ answers: [], error: "E_DNS_FAIL", detail: "REFUSED", rcode: "REFUSED" });
  });

  it("keeps the CNAME of a chain that ends in NXDOMAIN", async () => {
    const r = await ask({ qname: "dangling.example.test" });
    expect(r).toMatchObject({ error: "E_DNS_FAIL", detail: "NXDOMAIN" });
    expect(r.answers).toEqual([{ name: "dangling.example.test", type: "CNAME", ttl: 30, data: "gone.example.test" }]);
  });

  it("says NODATA, without an error, when the name exists but has no such records", async () => {
    const r = await ask({ qname: "host.example.test", type: "MX" });
    expect(r).toMatchObject({ answers: [], detail: "NODATA", rcode: "NOERROR" });
    expect(r.error).toBeUndefined();
    expect(r.summary).toContain("NODATA, the name exists but has no records of this type");
  });

  it("reports a resolver that never answers as TIMEOUT within the deadline, after retransmits", async () => {
    const r = await ask({ qname: "silent.example.test", timeout_ms: 400 });
    // Within the deadline: a result saying TIMEOUT, not the kernel's 504 for a call that outran timeout_ms.
    expect(r).toMatchObject({ answers: [], error: "E_DNS_FAIL", detail: "TIMEOUT" });
    expect(r.rcode).toBeUndefined();
    // It waited out its budget: timeout_ms less the kernel's 100 ms margin, less what the call spent before the
    // query began (a few ms on a loaded machine: CI once saw 296), not a failure at once.
    expect(r.query_ms).toBeGreaterThanOrEqual(250);
    // The last retransmit may still sit unread in this process's socket when the answer arrives: wait for it.
    const sent = () => zone.queries.filter((q) => q.name === "silent.example.test").length;
    for (let i = 0; i < 500 && sent() < 3; i++) await new Promise((res) => setTimeout(res, 10));
    expect(sent()).toBe(3);
  });

  it("reports a closed port 53 as UNREACHABLE at once", async () => {
    // At once: from the ICMP error, long before the deadline (which a loaded machine cannot bring forward).
    const r = await resolve({ qname: "host.example.test", server: CLOSED_IP, timeout_ms: 15_000 });
    expect(r).toMatchObject({ answers: [], error: "E_DNS_FAIL", detail: "UNREACHABLE", resolver: CLOSED_IP });
    expect(r.query_ms).toBeLessThan(7_500);
  });

  it("retries over TCP when the UDP answer is truncated", async () => {
    const r = await ask({ qname: "big.example.test", type: "TXT", limit: 2 });
    expect(r).toMatchObject({ transport: "tcp", truncated: true, omitted: 4, rcode: "NOERROR" });
    expect(r.answers).toEqual(
      BIG_TXT.slice(0, 2).map((data) => ({ name: "big.example.test", type: "TXT", ttl: 45, data })),
    );
    expect(zone.queries.map((q) => q.transport)).toEqual(["udp", "tcp"]);
    const forced = await ask({ qname: "tc.example.test" });
    expect(forced).toMatchObject({ transport: "tcp", answers: [{ type: "A", ttl: 33, data: "192.0.2.33" }] });
  });

  it("ignores spoofed replies (wrong id, wrong question)", async () => {
    const r = await ask({ qname: "spoofed.example.test" });
    expect(r.answers).toEqual([{ name: "spoofed.example.test", type: "A", ttl: 44, data: "192.0.2.44" }]);
  });

  it("asks the first nameserver of RESOLV_CONF when no server is given", async () => {
    const r = await resolve({ qname: "host.example.test" });
    expect(r).toMatchObject({ resolver: ZONE_IP, resolver_from: "resolv_conf", rcode: "NOERROR" });
    expect(r.answers.map((a) => a.data)).toEqual(["192.0.2.10", "192.0.2.11"]);
    expect(zone.queries).toHaveLength(1);
  });

  it("points at dns-config when the machine's own resolver fails, not when the name does not exist", async () => {
    const sf = await resolve({ qname: "servfail.example.test" });
    expect(sf).toMatchObject({ resolver_from: "resolv_conf", detail: "SERVFAIL" });
    expect(sf.next).toEqual({
      tool: "dns-config/dns_config_get",
      args: {},
      why: `the configured resolver ${ZONE_IP} failed (SERVFAIL): see which servers are set and by whom`,
    });
    // A resolver the caller chose, or a name that does not exist, says nothing about the configuration.
    expect((await ask({ qname: "servfail.example.test" })).next).toBeUndefined();
    expect((await resolve({ qname: "nope.example.test" })).next).toBeUndefined();
  });

  it("refuses a server outside OUTBOUND_ALLOW or inside OUTBOUND_DENY with 403, sending nothing", async () => {
    await expect(resolve({ qname: "host.example.test", server: "192.0.2.1" })).rejects.toMatchObject({
      code: "E_FORBIDDEN",
      status: 403,
    });
    await expect(resolve({ qname: "host.example.test", server: DENIED_IP })).rejects.toMatchObject({
      code: "E_FORBIDDEN",
      status: 403,
    });
    expect(denied.queries).toEqual([]);
  });

  it("the system resolver is the machine's configuration, not a target: asked even where OUTBOUND_DENY lies", async () => {
    // As on AWS, whose resolver 169.254.169.253 sits in the denied link-local range.
    const conf = join(dir, "resolv-denied.conf");
    await writeFile(conf, `nameserver ${DENIED_IP}\n`);
    const own = await spawnServer("network", { env: { RESOLV_CONF: conf, OUTBOUND_DENY: `${DENIED_IP}/32` } });
    try {
      const r = await createClient(own.url).call<DnsResult>("dns_resolve", { qname: "host.example.test" });
      expect(r).toMatchObject({ resolver: DENIED_IP, resolver_from: "resolv_conf", rcode: "NOERROR" });
      expect(denied.queries).toHaveLength(1);
      await expect(
        createClient(own.url).call("dns_resolve", { qname: "host.example.test", server: DENIED_IP }),
      ).rejects.toMatchObject({ code: "E_FORBIDDEN" });
      expect(denied.queries).toHaveLength(1);
    } finally {
      denied.queries.length = 0;
      await own.stop();
    }
  });

  it("rejects bad input with 400 before any packet", async () => {
    const bad = [
      { qname: "-rf.example.test" },
      { qname: "host.example.test", type: "ANY" },
      { qname: "host.example.test", server: "dns.example.test" },
      { qname: "host.example.test", server: `${ZONE_IP}:53` },
      { qname: "192.0.2.10", type: "A" },
      { qname: "host.example.test", port: 5353 },
      { qname: "host.example.test\n" },
      { qname: "x".repeat(300) },
      {},
    ];
    for (const input of bad) {
      await expect(resolve({ server: ZONE_IP, ...input }), JSON.stringify(input)).rejects.toMatchObject({
        code: "E_INVALID_INPUT",
        status: 400,
      });
    }
    await expect(resolve({ qname: "192.0.2.10", type: "A" })).rejects.toMatchObject({
      hint: 'example: {"qname":"192.0.2.10","type":"PTR"}',
    });
    expect(zone.queries).toEqual([]);
  });
});

describe("dns_resolve with no route to the resolver (the laptop with no network)", () => {
  let server: SpawnedServer;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "rn-noroute-"));
    // A resolver this sealed run has no route to (only loopback is up): the UDP connect itself fails.
    await writeFile(join(dir, "resolv.conf"), "nameserver 192.0.2.53\n");
    server = await spawnServer("network", { env: { RESOLV_CONF: join(dir, "resolv.conf") } });
  });
  afterAll(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("is a diagnosis, and the server lives on (a failed UDP connect once ended the process)", async () => {
    const client = createClient(server.url);
    for (const qname of ["example.com", "example.org"]) {
      const r = await client.call<DnsResult>("dns_resolve", { qname, timeout_ms: 1000 });
      expect(r).toMatchObject({ answers: [], error: "E_DNS_FAIL", resolver: "192.0.2.53" });
      expect(["UNREACHABLE", "TIMEOUT"]).toContain(r.detail);
    }
    expect((await client.healthz()).ok).toBe(true);
    expect(server.child.exitCode).toBeNull();
  });
});
