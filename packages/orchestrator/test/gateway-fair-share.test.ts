/**
 * Regression (issue 18, finding 6): the gateway had no share per client. One client's 120 concurrent calls
 * took all 16 of network's slots, and every other client's call came back E_BUSY until they finished. Now a
 * client (a local uid) holds at most ROADNERD_CLIENT_CALLS calls in flight (8); the excess is a 503 E_BUSY with
 * Retry-After at once, and a second client's call still reaches the server.
 * Real everything: the gateway on 127.0.0.1:0, the built network server attached by it (MAX_CALLS 16), a slow
 * HTTP target that holds every http_check until released, client A (this process, root) and client B (a child
 * process run as uid 65534 with setpriv).
 */
import type { ServerResponse } from "node:http";
import { pollUntil, scaledMs } from "@roadnerd/testkit";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CLIENT_CALLS } from "../src/config.ts";
import type { GatewayHttp } from "../src/gateway-http.ts";
import { callAsNobody, MCP_HEADERS, rpc } from "./gateway-clients.ts";
import { type HeldWorld, heldWorld } from "./held-world.ts";

const CALLS = 120;

let world: HeldWorld | undefined;
let gateway: GatewayHttp;
let targetUrl: string;
let held: Map<string, ServerResponse>;

beforeAll(async () => {
  world = await heldWorld();
  ({ gateway, targetUrl, held } = world);
}, 60_000);

afterAll(() => world?.close());

describe("a fair share of the servers' slots per gateway client", () => {
  it("client A's 120 concurrent calls hold 8 slots; the excess is 503 E_BUSY; client B's call is served", async () => {
    const agent = new Agent({ connections: CALLS + 10 });
    const answers: Array<{ status: number; retryAfter: unknown; body: Record<string, unknown> }> = [];
    const burst = Array.from({ length: CALLS }, (_, i) =>
      request(gateway.url, {
        method: "POST",
        headers: MCP_HEADERS,
        body: rpc(i + 10, `${targetUrl}/a/${i}`),
        dispatcher: agent,
      }).then(async (r) => {
        const answer = {
          status: r.statusCode,
          retryAfter: r.headers["retry-after"],
          body: (await r.body.json()) as Record<string, unknown>,
        };
        answers.push(answer);
        return answer;
      }),
    );
    // Before: 16 calls reached the target and 104 came back as E_BUSY results from the server itself.
    // Every call of A either answered or held at the target (the calls' own deadline is 15 s: well after).
    await pollUntil(() => answers.length + held.size >= CALLS, 10_000);
    const refused = answers.filter((a) => a.status === 503);
    expect(refused).toHaveLength(CALLS - DEFAULT_CLIENT_CALLS);
    expect(refused[0]).toMatchObject({ retryAfter: "1", body: { error: { data: { code: "E_BUSY" } } } });
    expect(held.size).toBe(DEFAULT_CLIENT_CALLS);

    // Client B, another local uid, while A's calls are still held: its call reaches the target and is served.
    let bAnswered = false;
    const b = callAsNobody(gateway.url, `${targetUrl}/b`, 30_000).finally(() => {
      bAnswered = true;
    });
    await pollUntil(() => held.has("/b") || bAnswered, 20_000);
    expect(held.has("/b")).toBe(true);
    for (const res of held.values()) res.end("done");
    const answerB = await b;
    expect(answerB.status).toBe(200);
    const result = JSON.parse(answerB.body).result;
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toMatchObject({ status: 200 });

    // A's 8 held calls are answered with their results once the target lets them go.
    const served = (await Promise.all(burst)).filter((a) => a.status === 200);
    expect(served).toHaveLength(DEFAULT_CLIENT_CALLS);
    for (const a of served) expect(JSON.stringify(a.body)).not.toContain("E_BUSY");
    await agent.close();
  }, 120_000);

  it("the page's watch streams count too: A's ninth is 503 E_BUSY, so A cannot take network's 32 stream slots", async () => {
    // Regression (stop 23's attacker, F3): 60 watches from one client took all 32 of network's stream slots.
    const { port } = new URL(gateway.url);
    const agent = new Agent({ connections: 20 });
    const watches = new AbortController();
    const open = (i: number) =>
      request(`http://127.0.0.1:${port}/api/watch?duration_ms=60000&interval_ms=5000&n=${i}`, {
        dispatcher: agent,
        signal: watches.signal,
      });
    const streams = await Promise.all(Array.from({ length: DEFAULT_CLIENT_CALLS }, (_, i) => open(i)));
    expect(streams.map((r) => r.statusCode)).toEqual(Array(DEFAULT_CLIENT_CALLS).fill(200));
    const ninth = await open(99);
    expect(ninth.statusCode).toBe(503);
    expect(ninth.headers["retry-after"]).toBe("1");
    expect(JSON.stringify(await ninth.body.json())).toContain("E_BUSY");
    watches.abort();
    for (const r of streams) await r.body.dump().catch(() => undefined);
    await agent.close();
    // The slots come back when the streams end: a ninth watch is let in again (bounded wait for the hang-ups).
    let status = 0;
    const deadline = performance.now() + scaledMs(10_000);
    while (status !== 200 && performance.now() < deadline) {
      const again = await request(`http://127.0.0.1:${port}/api/watch?duration_ms=1000&interval_ms=500`);
      status = again.statusCode;
      await again.body.dump();
    }
    expect(status).toBe(200);
  }, 60_000);
});
