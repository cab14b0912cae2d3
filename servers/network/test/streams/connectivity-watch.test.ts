/**
 * connectivity_watch through the kernel's stream runtime: rounds of real gateway/DNS/HTTP probes, bounded by
 * duration_ms, with DNS and HTTP answered by the loopback world (never the machine's resolver or a public host).
 *
 * The clock is the test's: rounds, probe deadlines and the stream's duration run on fake timers the test
 * advances, while the probes' sockets and processes stay real. A probe answers however long a loaded machine
 * takes, and the number of rounds in a duration is exact. (The SSE route and its bounds are covered by
 * start.test.ts and bad-input.test.ts against the built server.)
 */
import type { MessageOf } from "@roadnerd/conventions";
import { callTool, canBind, collectStream } from "@roadnerd/conventions/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { server as network } from "../../src/server.ts";
import { connectivityWatch } from "../../src/streams/connectivity-watch.ts";
import { routeInfo } from "../../src/tools/route-info.ts";
import { type LoopbackWorld, startLoopbackWorld } from "../helpers/loopback-world.ts";

const DNS_IP = "127.53.12.1";
const bindable = await canBind(DNS_IP, 53);
if (!bindable && process.env.CI === "true") throw new Error(`CI must be able to bind ${DNS_IP}:53 (run as root)`);

type Round = MessageOf<typeof connectivityWatch>;

const realSetTimeout = globalThis.setTimeout;

/** Poll on the real clock (bounded) while the fake one stands still. */
async function waitUntil(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000 && !check(); i++) await new Promise((r) => realSetTimeout(r, 10));
  if (!check()) throw new Error(`still waiting after 20 s: ${what}`);
}

describe.skipIf(!bindable)("connectivity_watch (needs root for port 53)", () => {
  let world: LoopbackWorld;
  let hasGateway: boolean;

  beforeAll(async () => {
    world = await startLoopbackWorld(DNS_IP);
    hasGateway = (await callTool(network, routeInfo, {}, { env: world.env })).default_gateway !== null;
  });
  afterAll(async () => {
    await world?.close();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Start the stream on the fake clock; `rounds` fills as messages come. */
  function watch(input: Record<string, unknown>) {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "performance"] });
    const rounds: Round[] = [];
    let ended = false;
    const done = collectStream(network, connectivityWatch, input, {
      env: world.env,
      onMessage: (m) => void rounds.push(m),
    }).then(({ end }) => {
      ended = true;
      return end;
    });
    return { rounds, done, ended: () => ended };
  }

  it("emits one message per round (one at once, then one per interval) until duration_ms, then ends", async () => {
    const w = watch({
      interval_ms: 500,
      duration_ms: 1700,
      qname: "example.com",
      url: `${world.webUrl}/`,
      run_id: "w1",
    });
    // Rounds at 0, 500, 1000 and 1500 ms; the duration ends the stream at 1700 ms, during the sleep after round 4.
    for (let n = 1; n <= 3; n++) {
      await waitUntil(() => w.rounds.length === n, `round ${n}`);
      await vi.advanceTimersByTimeAsync(499);
      expect(w.rounds).toHaveLength(n);
      await vi.advanceTimersByTimeAsync(1);
    }
    await waitUntil(() => w.rounds.length === 4, "round 4");
    await vi.advanceTimersByTimeAsync(199);
    expect(w.ended()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await w.done).toBe("duration");
    expect(w.rounds.map((r) => r.round)).toEqual([1, 2, 3, 4]);
    for (const r of w.rounds) {
      expect(r.run_id).toBe("w1");
      expect(r.dns).toMatchObject({ ok: true });
      expect(r.dns.detail).toContain("192.0.2.80");
      expect(r.http).toMatchObject({ ok: true });
      expect(r.gateway.ok).toBe(hasGateway);
      expect(r.verdict).toBe(hasGateway ? "ok" : "no_gateway");
    }
  });

  it("names DNS as the failing layer when the name does not resolve", async () => {
    const w = watch({ interval_ms: 500, duration_ms: 700, qname: "nope.example.com", url: `${world.webUrl}/` });
    await waitUntil(() => w.rounds.length === 1, "round 1");
    await vi.advanceTimersByTimeAsync(700);
    await w.done;
    const [first] = w.rounds;
    expect(first?.dns.ok).toBe(false);
    expect(first?.dns.detail).toContain("NXDOMAIN");
    expect(first?.verdict).toBe(hasGateway ? "dns" : "no_gateway");
  });

  it("refuses bad input before streaming", async () => {
    await expect(collectStream(network, connectivityWatch, { interval_ms: 10 })).rejects.toMatchObject({
      code: "E_INVALID_INPUT",
    });
  });
});
