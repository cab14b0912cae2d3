/**
 * Regression (issue 18, stop 23's attacker review): while uid A opened calls and hung up mid-call, again and
 * again, uid B's single call took 4–11 s. Causes: every new connection read the kernel's socket tables twice
 * (the trust check, then the share), ~10–20 ms of a libuv thread each whatever the namespace holds, so A's
 * churn queued seconds of reads in front of B's; and a call whose caller hung up during that wait ran on to
 * its own deadline, its share slot never released. Now one read serves every lookup waiting at once, and a
 * call whose caller is gone is cancelled at once and gives its slot back.
 * Real everything: the gateway on 127.0.0.1:0, the built network server it attaches, an HTTP target that holds
 * A's calls, client A (this process, root) and client B (a child process run as uid 65534 with setpriv).
 */
import type { ServerResponse } from "node:http";
import { pollUntil, scaledMs } from "@roadnerd/testkit";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayHttp } from "../src/gateway-http.ts";
import { callAsNobody, MCP_HEADERS, rpc } from "./gateway-clients.ts";
import { type HeldWorld, heldWorld } from "./held-world.ts";

/** A's calls at once in each round (its whole share), and the most rounds the churn may run. */
const PER_ROUND = 8;
const MAX_ROUNDS = 1_000;

let world: HeldWorld | undefined;
let gateway: GatewayHttp;
let targetUrl: string;
let held: Map<string, ServerResponse>;

beforeAll(async () => {
  world = await heldWorld();
  ({ gateway, targetUrl, held } = world);
}, 60_000);

afterAll(() => world?.close());

describe("uid A churns calls it abandons mid-call", () => {
  it("uid B's call is served within a scaled deadline; A's slots and the server's work are released", async () => {
    const agent = new Agent({ connections: 64 });
    let stop = false;
    let abandoned = 0;
    // A: its whole share at once, hung up on 100 ms later (mid-call), round after round until B is done.
    const churn = (async () => {
      for (let round = 0; round < MAX_ROUNDS && !stop; round++) {
        const hangUp = new AbortController();
        const calls = Array.from({ length: PER_ROUND }, (_, i) =>
          request(gateway.url, {
            method: "POST",
            headers: MCP_HEADERS,
            body: rpc(10 + i, `${targetUrl}/a/${round}/${i}`),
            dispatcher: agent,
            signal: hangUp.signal,
          })
            .then((r) => r.body.dump())
            .catch(() => {
              abandoned += 1;
            }),
        );
        await new Promise((r) => setTimeout(r, 100));
        hangUp.abort();
        await Promise.all(calls);
      }
    })();
    try {
      // ~10 s of churn first: before, the reads it queued were already seconds long when B arrived.
      expect(await pollUntil(() => abandoned >= 800, 60_000)).toBe(true);
      const started = performance.now();
      const deadline = scaledMs(3_000);
      const b = await Promise.race([
        callAsNobody(gateway.url, `${targetUrl}/fast`, 120_000),
        new Promise<undefined>((r) => setTimeout(() => r(undefined), deadline)),
      ]);
      const tookMs = performance.now() - started;
      // Before: B waited behind A's queue of table reads for as long as the churn went on.
      expect(b, `B not answered within ${deadline} ms while A churned`).toBeDefined();
      expect(b?.status).toBe(200);
      expect(JSON.parse(b?.body ?? "{}").result?.structuredContent).toMatchObject({ status: 200 });
      expect(tookMs).toBeLessThan(deadline);
    } finally {
      stop = true;
      await churn;
    }
    // At least what the churn had reached before B was sent (a round started just as B was answered may meet
    // a slot not yet given back and be answered 503 rather than abandoned).
    expect(abandoned).toBeGreaterThanOrEqual(800);
    // Every abandoned call was cancelled at the server too: nothing is left waiting at the target (before, they
    // ran on to their 15 s deadline).
    expect(await pollUntil(() => held.size === 0, 5_000)).toBe(true);
    // And A's share came back whole: all 8 slots at once are let in again (none is 503 E_BUSY).
    const again = await Promise.all(
      Array.from({ length: PER_ROUND }, () =>
        request(gateway.url, {
          method: "POST",
          headers: MCP_HEADERS,
          body: rpc(99, `${targetUrl}/fast`),
          dispatcher: agent,
        }),
      ),
    );
    expect(again.map((r) => r.statusCode)).toEqual(Array(PER_ROUND).fill(200));
    for (const r of again) await r.body.dump();
    await agent.close();
  }, 180_000);
});
