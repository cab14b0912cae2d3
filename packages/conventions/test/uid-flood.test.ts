/**
 * Regression (issue 18, the reconnecting variant of the idle-socket lockout): a local user the server refuses
 * (uid 65534, not in ALLOWED_UIDS) held 800 idle sockets against the cap of 768 and reopened each the moment it
 * was closed; the uid was judged only when a request came, so the sockets kept every slot and root's /healthz
 * got 1 answer in 12, its tool calls 0 in 5 (A1). Stop 26's attacker then sent half a request on each socket,
 * or keep-alive /healthz requests (B1): whatever a full cap cut came back unjudged, and root was cut 5–9 times
 * in 20. Now a newcomer past the cap waits parked until judged (uid-cap.ts, ADR 0058).
 */
import type { AddressInfo } from "node:net";
import { setTimeout } from "node:timers/promises";
import { type FloodMode, scaledMs, type UidFlood, uidFlood } from "@roadnerd/testkit";
import type { FastifyInstance } from "fastify";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildHttpApp } from "../src/http/http-app.ts";
import { testRuntime } from "../src/testing/inject.ts";
import { demoServer } from "./fixtures/demo-server.ts";

let app: FastifyInstance;
let port: number;
const floods: UidFlood[] = [];

beforeAll(async () => {
  app = await buildHttpApp(testRuntime(demoServer));
  await app.listen({ host: "127.0.0.1", port: 0 });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const f of floods) await f.stop();
  await app?.close();
});

/** Whether one request is answered 200 within `ms` (one attempt, a fresh connection). */
async function served(path: string, init: { method?: "POST"; body?: string } = {}, ms = 3000): Promise<boolean> {
  try {
    const res = await request(`http://127.0.0.1:${port}${path}`, {
      ...init,
      headers: { "content-type": "application/json" },
      headersTimeout: scaledMs(ms),
      bodyTimeout: scaledMs(ms),
      reset: true,
    });
    await res.body.dump();
    return res.statusCode === 200;
  } catch {
    return false;
  }
}

describe("a refused uid flooding the connection cap", () => {
  // The review's runs: 800 sockets (one child under ulimit -n 1024), silent, sending half a request, or sending
  // whole keep-alive /healthz requests. 2,000 are served too when the machine is idle (measured with
  // scripts/bench/uid-flood-ab.mjs), but not reliably on a loaded 2-core machine: see docs/security.md.
  it.each<FloodMode>(["idle", "half", "requests"])(
    "800 %s sockets from uid 65534, reopened on close: root's /healthz and tool calls are served",
    async (mode) => {
      const flood = await uidFlood(port, 800, scaledMs(30_000), mode);
      floods.push(flood);
      // As the attacker did: root comes once the flood has churned a while, and keeps coming over seconds.
      await setTimeout(2000);
      let health = 0;
      for (let i = 0; i < 12; i++) {
        // A keep-alive flood still costs root seconds (ADR 0058, "Left"): served, however slowly, is what holds.
        if (await served("/healthz", {}, 10_000)) health += 1;
        await setTimeout(200);
      }
      let calls = 0;
      for (let i = 0; i < 5; i++)
        if (
          await served("/actions/echo_name", { method: "POST", body: JSON.stringify({ name: "example.com" }) }, 10_000)
        )
          calls += 1;
      await flood.stop();
      expect({ health, calls }).toEqual({ health: 12, calls: 5 });
    },
    120_000,
  );
});
