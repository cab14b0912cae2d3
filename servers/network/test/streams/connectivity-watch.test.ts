/**
 * connectivity_watch against the real server: rounds of gateway/DNS/HTTP probes, bounded by duration_ms,
 * with DNS and HTTP answered by the loopback world (never the machine's resolver or a public host).
 */
import { createClient, type RoadNerdClient } from "@roadnerd/client";
import type { MessageOf } from "@roadnerd/conventions";
import { canBind } from "@roadnerd/conventions/testing";
import { type SpawnedServer, spawnServer } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { connectivityWatch } from "../../src/streams/connectivity-watch.ts";
import { type LoopbackWorld, startLoopbackWorld } from "../helpers/loopback-world.ts";

const DNS_IP = "127.53.12.1";
const bindable = await canBind(DNS_IP, 53);
if (!bindable && process.env.CI === "true") throw new Error(`CI must be able to bind ${DNS_IP}:53 (run as root)`);

type Round = MessageOf<typeof connectivityWatch>;

describe.skipIf(!bindable)("/sse/connectivity_watch (needs root for port 53)", () => {
  let world: LoopbackWorld;
  let server: SpawnedServer;
  let client: RoadNerdClient;
  let hasGateway: boolean;

  beforeAll(async () => {
    world = await startLoopbackWorld(DNS_IP);
    server = await spawnServer("network", { env: world.env });
    client = createClient(server.url);
    hasGateway = (await client.call<{ default_gateway: unknown }>("route_info", {})).default_gateway !== null;
  });
  afterAll(async () => {
    await server?.stop();
    await world?.close();
  });

  async function watch(query: Record<string, string | number>) {
    const events: Array<{ event: string; data: unknown }> = [];
    for await (const e of client.stream("connectivity_watch", query)) events.push({ event: e.event, data: e.data });
    return events;
  }

  it("emits one message per round until duration_ms, then end", async () => {
    const events = await watch({
      interval_ms: 500,
      duration_ms: 1700,
      qname: "example.com",
      url: `${world.webUrl}/`,
      run_id: "w1",
    });
    const rounds = events.filter((e) => e.event === "message").map((e) => e.data as Round);
    expect(rounds.length).toBeGreaterThanOrEqual(2);
    expect(rounds.length).toBeLessThanOrEqual(5);
    expect(rounds.map((r) => r.round)).toEqual(rounds.map((_, i) => i + 1));
    for (const r of rounds) {
      expect(r.run_id).toBe("w1");
      expect(r.dns).toMatchObject({ ok: true });
      expect(r.dns.detail).toContain("192.0.2.80");
      expect(r.http).toMatchObject({ ok: true });
      expect(r.gateway.ok).toBe(hasGateway);
      expect(r.verdict).toBe(hasGateway ? "ok" : "no_gateway");
    }
    expect(events.at(-1)).toEqual({ event: "end", data: { reason: "duration" } });
  });

  it("names DNS as the failing layer when the name does not resolve", async () => {
    const events = await watch({
      interval_ms: 500,
      duration_ms: 700,
      qname: "nope.example.com",
      url: `${world.webUrl}/`,
    });
    const first = events.find((e) => e.event === "message")?.data as Round;
    expect(first.dns.ok).toBe(false);
    expect(first.dns.detail).toContain("NXDOMAIN");
    expect(first.verdict).toBe(hasGateway ? "dns" : "no_gateway");
  });

  it("refuses bad query input before streaming", async () => {
    await expect(watch({ interval_ms: 10 })).rejects.toMatchObject({ code: "E_INVALID_INPUT", status: 400 });
  });
});
