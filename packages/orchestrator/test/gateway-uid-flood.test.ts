/**
 * Regression (issue 18, the reconnecting idle-socket lockout, at the gateway): uid 65534, which the gateway
 * refuses, held 800 idle sockets against its cap of 768 and reopened each on close; root's /healthz and MCP
 * calls were refused (gateway 3/15 with 2,000 sockets). The gateway's cap is the kernel's (boundConnections):
 * the uid judged at accept, a refused socket destroyed, a full cap cutting the oldest unjudged connection.
 */
import { readRegistry } from "@roadnerd/registry";
import { scaledMs, type UidFlood, uidFlood } from "@roadnerd/testkit";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Attacher } from "../src/attach.ts";
import { loadCatalog } from "../src/catalog.ts";
import { type GatewayHttp, serveGatewayHttp } from "../src/gateway-http.ts";
import { RulesPlanner } from "../src/planners/rules.ts";

let gateway: GatewayHttp;
const floods: UidFlood[] = [];

beforeAll(async () => {
  const attacher = new Attacher({ servers: readRegistry() });
  gateway = await serveGatewayHttp({ catalog: await loadCatalog(), attacher, planner: () => new RulesPlanner() });
});
afterAll(async () => {
  for (const f of floods) await f.stop();
  await gateway?.close();
});

/** Whether one request is answered 200 within a few seconds (one attempt, a fresh connection). */
async function served(url: string, body?: string): Promise<boolean> {
  try {
    const res = await request(url, {
      ...(body ? { method: "POST" as const, body } : {}),
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      headersTimeout: scaledMs(3000),
      bodyTimeout: scaledMs(3000),
      reset: true,
    });
    await res.body.dump();
    return res.statusCode === 200;
  } catch {
    return false;
  }
}

describe("a refused uid flooding the gateway's connection cap", () => {
  it("800 idle sockets from uid 65534, reopened on close: root's /healthz and MCP calls are served", async () => {
    const { port } = new URL(gateway.url);
    // The review's run: 800 sockets (one child under ulimit -n 1024). 2,000 from two children are served too
    // when the machine is idle (measured), but not reliably on a loaded 2-core machine: see docs/reliability.md.
    floods.push(await uidFlood(Number(port), 800, scaledMs(30_000)));
    let health = 0;
    for (let i = 0; i < 12; i++) if (await served(gateway.url.replace(/mcp$/, "healthz"))) health += 1;
    let calls = 0;
    const rpc = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
    for (let i = 0; i < 5; i++) if (await served(gateway.url, rpc)) calls += 1;
    for (const f of floods) await f.stop();
    expect({ health, calls }).toEqual({ health: 12, calls: 5 });
  }, 120_000);
});
