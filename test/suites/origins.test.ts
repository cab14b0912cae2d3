/**
 * The Origin rule for every registered server (ADR 0034, attacker review F1), so a new server gets it the day it
 * is added: a page on another loopback address at the server's port (127.0.0.2, [::1] — free to another local
 * user while the server listens on 127.0.0.1) or on another port (the MCP Inspector's, unlisted) gets 403 and no
 * CORS header on POST /actions/<tool> and GET /sse/<tool>; the server's own origin is served with CORS.
 */
import type { AddressInfo } from "node:net";
import type { AnyTool } from "@roadnerd/conventions";
import { testApp } from "@roadnerd/conventions/testing";
import { loadServer, selectedServers } from "@roadnerd/registry";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const registered = selectedServers();

describe.each(registered)("browser origins against $name", (server) => {
  let app: Awaited<ReturnType<typeof testApp>>;
  let port: number;
  let tool: AnyTool;

  beforeAll(async () => {
    const def = await loadServer(server.name);
    const first = def.tools[0];
    if (!first) throw new Error(`${server.name} has no tool`);
    tool = first;
    app = await testApp(def);
    await app.listen({ host: "127.0.0.1", port: 0 });
    port = (app.server.address() as AddressInfo).port;
  });
  afterAll(() => app?.close());

  const post = async (origin: string) => {
    const res = await request(`http://127.0.0.1:${port}/actions/${tool.name}`, {
      method: "POST",
      headers: { origin, "content-type": "application/json", "sec-fetch-mode": "cors", "sec-fetch-site": "same-site" },
      body: JSON.stringify({ ...(tool.example as Record<string, unknown>), timeout_ms: 1000 }),
    });
    const text = await res.body.text();
    // A tool may refuse its example's target (E_FORBIDDEN from the outbound policy): only the Origin rule counts.
    const refused = res.statusCode === 403 && text.includes("Origin not allowed");
    return { refused, cors: res.headers["access-control-allow-origin"] };
  };

  it("another loopback address or port: 403, no CORS, on POST and on a tool stream", async () => {
    for (const origin of [`http://127.0.0.2:${port}`, `http://[::1]:${port}`, "http://localhost:6274"]) {
      expect(await post(origin), origin).toEqual({ refused: true, cors: undefined });
    }
    const query = new URLSearchParams(
      Object.entries(tool.example as Record<string, unknown>).map(([k, v]): [string, string] => [k, String(v)]),
    );
    const sse = await request(`http://127.0.0.1:${port}/sse/${tool.name}?${query}`, {
      headers: { origin: `http://[::1]:${port}`, "sec-fetch-mode": "cors", "sec-fetch-dest": "empty" },
    });
    expect(sse.statusCode).toBe(403);
    expect(await sse.body.text()).toContain("Origin not allowed");
  });

  it("its own origin is served, with CORS", async () => {
    const own = await post(`http://127.0.0.1:${port}`);
    expect(own.refused).toBe(false);
    expect(own.cors).toBe(`http://127.0.0.1:${port}`);
  });
});
