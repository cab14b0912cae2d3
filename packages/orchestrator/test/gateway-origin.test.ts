/**
 * The gateway follows the servers' one Origin rule (ADR 0034): its own origin, or ALLOWED_ORIGINS exactly. Before,
 * it took any scheme for its own host and port (`https://127.0.0.1:<port>`, not an origin it serves) and had no
 * way to let the MCP Inspector's direct mode in; now a listed origin gets its preflight and CORS headers.
 */

import { readRegistry } from "@roadnerd/registry";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Attacher } from "../src/attach.ts";
import { loadCatalog } from "../src/catalog.ts";
import { type GatewayHttp, serveGatewayHttp } from "../src/gateway-http.ts";
import { RulesPlanner } from "../src/planners/rules.ts";

let attacher: Attacher;
let gateway: GatewayHttp;
let base: string;

beforeAll(async () => {
  attacher = new Attacher({ servers: readRegistry() });
  const before = process.env.ALLOWED_ORIGINS;
  process.env.ALLOWED_ORIGINS = "http://localhost:6274";
  try {
    gateway = await serveGatewayHttp({ catalog: await loadCatalog(), attacher, planner: () => new RulesPlanner() });
  } finally {
    if (before === undefined) delete process.env.ALLOWED_ORIGINS;
    else process.env.ALLOWED_ORIGINS = before;
  }
  base = gateway.url.replace(/\/mcp$/, "");
});
afterAll(async () => {
  await gateway?.close();
  await attacher?.close();
});

async function get(origin: string) {
  const res = await request(`${base}/healthz`, { headers: { origin } });
  const body = (await res.body.json()) as { error?: { message: string; hint?: string } };
  return { status: res.statusCode, cors: res.headers["access-control-allow-origin"], error: body.error };
}

describe("the gateway's Origin rule", () => {
  it("refuses another scheme, another loopback address or port, with the ALLOWED_ORIGINS hint", async () => {
    const port = new URL(base).port;
    for (const origin of [`https://127.0.0.1:${port}`, `http://127.0.0.2:${port}`, "http://localhost:6275"]) {
      const res = await get(origin);
      expect(res.status, origin).toBe(403);
      expect(res.cors).toBeUndefined();
      expect(res.error?.hint).toContain(`ALLOWED_ORIGINS=${origin}`);
    }
  });

  it("serves its own origin, and a listed one with a preflight and CORS headers", async () => {
    expect((await get(base)).status).toBe(200);
    const pre = await request(`${base}/mcp`, {
      method: "OPTIONS",
      headers: {
        origin: "http://localhost:6274",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, mcp-protocol-version",
      },
    });
    await pre.body.dump();
    expect(pre.statusCode).toBe(204);
    expect(pre.headers["access-control-allow-origin"]).toBe("http://localhost:6274");
    expect(String(pre.headers["access-control-allow-headers"])).toContain("mcp-protocol-version");
    const res = await request(`${base}/mcp`, {
      method: "POST",
      headers: {
        origin: "http://localhost:6274",
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    const list = (await res.body.json()) as { result?: { tools: unknown[] } };
    expect(res.statusCode).toBe(200);
    expect(res.headers["access-control-allow-origin"]).toBe("http://localhost:6274");
    expect(list.result?.tools.length).toBeGreaterThan(1);
  });
});

describe("a RoadNerd tool's own request (ADR 0047)", () => {
  it("is refused with 403 E_FORBIDDEN on every route, /healthz included, before anything runs", async () => {
    for (const [method, path] of [
      ["GET", "/healthz"],
      ["POST", "/mcp"],
    ] as const) {
      const res = await request(`${base}${path}`, {
        method,
        headers: { "x-roadnerd-hop": "1", "content-type": "application/json" },
        ...(method === "POST" ? { body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) } : {}),
      });
      const body = (await res.body.json()) as { error?: { code: string; message: string } };
      expect(res.statusCode, path).toBe(403);
      expect(body.error, path).toEqual({
        code: "E_FORBIDDEN",
        message: "a RoadNerd tool's own request may not call a RoadNerd server",
      });
    }
  });
});
