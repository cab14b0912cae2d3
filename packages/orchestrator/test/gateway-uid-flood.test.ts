/**
 * Regression (issue 18, A1, the reconnecting idle-socket lockout, at the gateway): uid 65534, which the gateway
 * refuses, held 800 idle sockets against its cap of 768 and reopened each on close; root's /healthz got 1 answer
 * in 12 and its tools/call 0 in 5 (A1); stop 26's attacker sent half requests, or keep-alive /healthz requests,
 * and root's calls failed again (B1). The gateway's cap is the kernel's (boundConnections): under pressure the
 * uids are judged, a newcomer past the cap is parked until judged, a refused socket gives way first.
 * Real everything: the gateway on 127.0.0.1:0, the built network server attached by it, a target answering at
 * once, and the flood from a child process run as uid 65534 (setpriv, testkit's uidFlood).
 */
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout } from "node:timers/promises";
import { readRegistry } from "@roadnerd/registry";
import { type FloodMode, scaledMs, type UidFlood, uidFlood } from "@roadnerd/testkit";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Attacher } from "../src/attach.ts";
import { loadCatalog } from "../src/catalog.ts";
import { type GatewayHttp, serveGatewayHttp } from "../src/gateway-http.ts";
import { RulesPlanner } from "../src/planners/rules.ts";
import { MCP_HEADERS, rpc } from "./gateway-clients.ts";

const target = createServer((_req, res) => res.end("ok"));
let targetUrl: string;
let attacher: Attacher;
let gateway: GatewayHttp;
const floods: UidFlood[] = [];

/** Whether one request is answered 200 within a few seconds (one attempt, a fresh connection). */
async function served(url: string, body?: string): Promise<boolean> {
  try {
    const res = await request(url, {
      ...(body ? { method: "POST" as const, body } : {}),
      headers: MCP_HEADERS,
      // Served, however slowly: a keep-alive flood still costs root seconds (ADR 0058, "Left").
      headersTimeout: scaledMs(10_000),
      bodyTimeout: scaledMs(10_000),
      reset: true,
    });
    const text = await res.body.text();
    return res.statusCode === 200 && !text.includes('"isError":true');
  } catch {
    return false;
  }
}

beforeAll(async () => {
  target.listen(0, "127.0.0.1");
  await once(target, "listening");
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/fast`;
  attacher = new Attacher({ servers: readRegistry() });
  gateway = await serveGatewayHttp({ catalog: await loadCatalog(), attacher, planner: () => new RulesPlanner() });
  // network is attached by a first call: its spawn is not what this test measures.
  expect(await served(gateway.url, rpc(0, targetUrl))).toBe(true);
}, 60_000);
afterAll(async () => {
  for (const f of floods) await f.stop();
  await gateway?.close();
  await attacher?.close();
  target.closeAllConnections();
  await new Promise((r) => target.close(r));
});

describe("a refused uid flooding the gateway's connection cap", () => {
  it.each<FloodMode>(["idle", "half", "requests"])(
    "800 %s sockets from uid 65534, reopened on close: root's /healthz and tools/call are served",
    async (mode) => {
      const { port } = new URL(gateway.url);
      const flood = await uidFlood(Number(port), 800, scaledMs(60_000), mode);
      floods.push(flood);
      // Root comes once the flood has churned a while, and keeps coming over seconds.
      await setTimeout(2000);
      let health = 0;
      for (let i = 0; i < 12; i++) {
        if (await served(gateway.url.replace(/mcp$/, "healthz"))) health += 1;
        await setTimeout(200);
      }
      let calls = 0;
      for (let i = 0; i < 5; i++) if (await served(gateway.url, rpc(i + 1, targetUrl))) calls += 1;
      await flood.stop();
      expect({ health, calls }).toEqual({ health: 12, calls: 5 });
    },
    180_000,
  );
});
