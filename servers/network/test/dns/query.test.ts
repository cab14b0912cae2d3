/** queryDns in-process against a real DNS server on 127.0.0.1:<free port>: the wire, not a mock. */
import { createSocket } from "node:dgram";
import { testRuntime } from "@roadnerd/conventions/testing";
import { startDnsServer, type TestDnsServer } from "@roadnerd/testkit";
import dnsPacket from "dns-packet";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { formatAnswers } from "../../src/dns/format-answer.ts";
import { type QueryOptions, queryDns, replyMatches, UDP_ATTEMPTS } from "../../src/dns/query.ts";
import { server } from "../../src/server.ts";
import { BIG_TXT, MISBEHAVE, ZONE } from "../helpers/dns-zone.ts";

let dns: TestDnsServer;
beforeAll(async () => {
  dns = await startDnsServer({ host: "127.0.0.1", records: ZONE, misbehave: MISBEHAVE });
});
afterAll(async () => {
  await dns?.close();
});
beforeEach(() => {
  dns.queries.length = 0;
});

/** Loopback is allowed by the default policy; the dial checks the server before each socket opens. */
const policy = testRuntime(server).outbound;

// Answered questions never wait on their timeout: a long one costs nothing and no loaded machine reaches it.
const ask = (name: string, type: QueryOptions["type"] = "A", extra: Partial<QueryOptions> = {}) =>
  queryDns({ name, type, server: dns.host, port: dns.port, timeoutMs: 10_000, ...extra, policy });

/**
 * Time the test controls for retransmits and deadlines: each fires when the test advances the clock, never
 * because a loaded machine was slow. Sockets stay real; `waitUntil` polls them on the real clock.
 */
const realSetTimeout = globalThis.setTimeout;
const fakeClock = () => vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
afterEach(() => {
  vi.useRealTimers();
});

async function waitUntil(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => realSetTimeout(r, 10));
  if (!check()) throw new Error(`still waiting after 10 s: ${what}`);
}

/** Two turns of the event loop: a datagram already sent over loopback has been read by then. */
async function loopTurns(): Promise<void> {
  for (let i = 0; i < 2; i++) await new Promise((r) => setImmediate(r));
}

const seen = (name: string) => dns.queries.filter((q) => q.name === name).length;

/** Sockets are released a tick after close: wait, then count what is still open. */
async function openSockets(): Promise<number> {
  await new Promise((r) => setTimeout(r, 20));
  return process.getActiveResourcesInfo().filter((n) => n === "UDPWrap" || n === "TCPSocketWrap").length;
}

describe("queryDns", () => {
  it("gets an A answer over UDP with the TTL from the wire", async () => {
    const out = await ask("host.example.test");
    if (!out.ok) throw new Error(out.message);
    expect(out.transport).toBe("udp");
    expect(out.reply.rcode).toBe("NOERROR");
    expect(formatAnswers(out.reply.answers ?? [])).toEqual([
      { name: "host.example.test", type: "A", ttl: 60, data: "192.0.2.10" },
      { name: "host.example.test", type: "A", ttl: 60, data: "192.0.2.11" },
    ]);
    expect(dns.queries).toEqual([{ transport: "udp", name: "host.example.test", type: "A", id: out.reply.id }]);
  });

  it("uses a fresh random id per query", async () => {
    for (let i = 0; i < 4; i++) await ask("host.example.test");
    expect(new Set(dns.queries.map((q) => q.id)).size).toBeGreaterThan(1);
  });

  it("retries over TCP when the UDP answer is truncated for size", async () => {
    const out = await ask("big.example.test", "TXT");
    if (!out.ok) throw new Error(out.message);
    expect(out.transport).toBe("tcp");
    expect(formatAnswers(out.reply.answers ?? []).map((r) => [r.ttl, r.data])).toEqual(BIG_TXT.map((t) => [45, t]));
    expect(dns.queries.map((q) => q.transport)).toEqual(["udp", "tcp"]);
  });

  it("retries over TCP when the server sets TC on a small answer", async () => {
    const out = await ask("tc.example.test");
    if (!out.ok) throw new Error(out.message);
    expect(out.transport).toBe("tcp");
    expect(formatAnswers(out.reply.answers ?? [])).toEqual([
      { name: "tc.example.test", type: "A", ttl: 33, data: "192.0.2.33" },
    ]);
  });

  it("ignores replies with the wrong id or the wrong question", async () => {
    const out = await ask("spoofed.example.test");
    if (!out.ok) throw new Error(out.message);
    expect(formatAnswers(out.reply.answers ?? []).map((r) => r.data)).toEqual(["192.0.2.44"]);
  });

  it("times out on a name that is never answered, after retransmitting", async () => {
    fakeClock();
    const pending = ask("silent.example.test", "A", { timeoutMs: 300 });
    // One send at once, then one every 100 ms (none sooner), then the deadline at 300 ms.
    for (let sent = 1; sent <= UDP_ATTEMPTS; sent++) {
      await waitUntil(() => seen("silent.example.test") >= sent, `send ${sent}`);
      await vi.advanceTimersByTimeAsync(300 / UDP_ATTEMPTS - 1);
      await loopTurns();
      expect(seen("silent.example.test")).toBe(sent);
      await vi.advanceTimersByTimeAsync(1);
    }
    expect(await pending).toMatchObject({ ok: false, failure: "TIMEOUT", ms: 300 });
    expect(seen("silent.example.test")).toBe(UDP_ATTEMPTS);
  });

  it("an address record whose data is cut short is BAD_REPLY, never a made-up address", async () => {
    const out = await ask("short.example.test", "A");
    expect(out).toMatchObject({ ok: false, failure: "BAD_REPLY", message: "malformed A record data" });
  });

  it("reports only garbage as BAD_REPLY, at the deadline", async () => {
    fakeClock();
    const pending = ask("garbage.example.test", "A", { timeoutMs: 300 });
    let settled = false;
    void pending.then(() => {
      settled = true;
    });
    // Each send is answered with garbage at once; none of it ends the wait early.
    for (let sent = 1; sent <= UDP_ATTEMPTS; sent++) {
      await waitUntil(() => seen("garbage.example.test") >= sent, `send ${sent}`);
      await loopTurns();
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(300 / UDP_ATTEMPTS);
    }
    expect(await pending).toMatchObject({ ok: false, failure: "BAD_REPLY", ms: 300 });
  });

  it("says UNREACHABLE at once when nothing listens on the port", async () => {
    const probe = createSocket("udp4");
    await new Promise<void>((r) => probe.bind(0, "127.0.0.1", () => r()));
    const port = probe.address().port;
    await new Promise<void>((r) => probe.close(() => r()));
    // With the clock stopped no retransmit or deadline can fire: the answer comes from the ICMP error alone.
    fakeClock();
    const out = await queryDns({
      name: "host.example.test",
      type: "A",
      server: "127.0.0.1",
      port,
      timeoutMs: 1500,
      policy,
    });
    expect(out).toMatchObject({ ok: false, failure: "UNREACHABLE", ms: 0 });
  });

  it("says TCP_FAILED when the answer is truncated and TCP is closed", async () => {
    // A UDP-only responder that truncates everything: the TCP retry meets a closed port.
    const udpOnly = createSocket("udp4");
    udpOnly.on("message", (msg, from) => {
      const q = dnsPacket.decode(msg);
      const flags = dnsPacket.TRUNCATED_RESPONSE | dnsPacket.RECURSION_AVAILABLE;
      udpOnly.send(
        dnsPacket.encode({ type: "response", id: q.id, flags, questions: q.questions }),
        from.port,
        from.address,
      );
    });
    await new Promise<void>((r) => udpOnly.bind(0, "127.0.0.1", () => r()));
    try {
      const port = udpOnly.address().port;
      const out = await queryDns({
        name: "host.example.test",
        type: "A",
        server: "127.0.0.1",
        port,
        timeoutMs: 10_000,
        policy,
      });
      expect(out).toMatchObject({ ok: false, failure: "TCP_FAILED" });
    } finally {
      await new Promise<void>((r) => udpOnly.close(() => r()));
    }
  });

  it("stops at once when the signal aborts", async () => {
    fakeClock();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const pending = ask("silent.example.test", "A", { timeoutMs: 5000, signal: controller.signal });
    await vi.advanceTimersByTimeAsync(50);
    expect(await pending).toMatchObject({ ok: false, failure: "TIMEOUT", ms: 50 });
  });

  it("leaves no socket open, whatever the outcome", async () => {
    const before = await openSockets();
    await ask("host.example.test");
    await ask("big.example.test", "TXT");
    await ask("silent.example.test", "A", { timeoutMs: 100 });
    expect(await openSockets()).toBe(before);
  });
});

describe("replyMatches", () => {
  const q = { name: "Host.Example.Test.", type: "A" as const };
  const decoded = (id: number, name: string, type: "A" | "AAAA", rcode = 0) =>
    dnsPacket.decode(dnsPacket.encode({ type: "response", id, flags: rcode, questions: [{ name, type }] }));

  it("matches id, question name (any case) and type", () => {
    expect(replyMatches(decoded(7, "host.example.test", "A"), 7, q)).toBe(true);
    expect(replyMatches(decoded(8, "host.example.test", "A"), 7, q)).toBe(false);
    expect(replyMatches(decoded(7, "other.example.test", "A"), 7, q)).toBe(false);
    expect(replyMatches(decoded(7, "host.example.test", "AAAA"), 7, q)).toBe(false);
  });

  it("accepts an error reply without a question, never an answer without one", () => {
    const bare = (rcode: number) => dnsPacket.decode(dnsPacket.encode({ type: "response", id: 7, flags: rcode }));
    expect(replyMatches(bare(5), 7, q)).toBe(true);
    expect(replyMatches(bare(0), 7, q)).toBe(false);
  });
});
