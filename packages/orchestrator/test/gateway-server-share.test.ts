/**
 * Regression (issue 18, F7): root holding every call slot of network directly (its own slow calls, not through
 * the gateway) left uid 65534's calls through the gateway E_BUSY 3 times of 3: the gateway called network as
 * itself, and the server had no share per caller. Now the gateway names the client it calls for
 * (RELAYED_CALLER_HEADER) and the server's fair share gives that client a slot, taken from root's newest call.
 * Real everything: the gateway on 127.0.0.1:0, the built network server it attached (MAX_CALLS 16), a target
 * that holds every http_check until released, root in this process, uid 65534 a setpriv child.
 */
import type { ServerResponse } from "node:http";
import { pollUntil } from "@roadnerd/testkit";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Attacher } from "../src/attach.ts";
import type { GatewayHttp } from "../src/gateway-http.ts";
import { callAsNobody } from "./gateway-clients.ts";
import { type HeldWorld, heldWorld } from "./held-world.ts";

/** More than network's 16 slots. */
const ROOT_CALLS = 20;

let world: HeldWorld | undefined;
let gateway: GatewayHttp;
let attacher: Attacher;
let targetUrl: string;
let held: Map<string, ServerResponse>;

beforeAll(async () => {
  world = await heldWorld();
  ({ gateway, attacher, targetUrl, held } = world);
}, 60_000);

afterAll(() => world?.close());

describe("a server's share for a client the gateway calls for", () => {
  it("root holds all of network's slots directly; uid 65534's call through the gateway is still served", async () => {
    const network = (await attacher.ensure("network")).client;
    const agent = new Agent({ connections: ROOT_CALLS + 5 });
    const answers: Array<{ status: number; code: unknown }> = [];
    const root = Array.from({ length: ROOT_CALLS }, (_, i) =>
      request(`${network.baseUrl}/actions/http_check`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ url: `${targetUrl}/root/${i}`, timeout_ms: 15_000 }),
        dispatcher: agent,
      }).then(async (r) => {
        const body = (await r.body.json()) as { error?: { code?: string } };
        answers.push({ status: r.statusCode, code: body.error?.code });
      }),
    );
    // Root alone: 16 calls held at the target, the other 4 refused by network itself.
    await pollUntil(() => held.size === 16 && answers.length === ROOT_CALLS - 16, 10_000);
    expect(held.size).toBe(16);
    expect(answers).toEqual(Array(ROOT_CALLS - 16).fill({ status: 503, code: "E_BUSY" }));

    // Before: an isError result carrying E_BUSY. Now root's newest call gives its slot up (503 E_BUSY).
    let answered = false;
    const nobody = callAsNobody(gateway.url, `${targetUrl}/b`, 30_000).finally(() => {
      answered = true;
    });
    await pollUntil(() => held.has("/b") || answered, 20_000);
    expect(held.has("/b")).toBe(true);
    expect(answers.filter((a) => a.code === "E_BUSY")).toHaveLength(ROOT_CALLS - 16 + 1);
    for (const res of held.values()) res.end("done");
    const answer = await nobody;
    expect(answer.status).toBe(200);
    const result = JSON.parse(answer.body).result;
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toMatchObject({ status: 200 });
    await Promise.all(root);
    await agent.close();
  }, 120_000);
});
