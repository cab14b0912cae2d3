/**
 * Regression (attacker review F1): any loopback Origin got CORS on POST, and a page on 127.0.0.2 or [::1] at our
 * port could open tool streams. Another local user can serve such a page (while we listen on 127.0.0.1, those
 * addresses are free at our port), and the victim's browser then read our answers as the victim. The headers
 * below are the ones that browser sends; the origins are refused unless they are ours or listed.
 */
import { once } from "node:events";
import { type AddressInfo, createServer } from "node:net";
import type { FastifyInstance } from "fastify";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildHttpApp } from "../src/http/http-app.ts";
import { testRuntime } from "../src/testing/inject.ts";
import { demoServer } from "./fixtures/demo-server.ts";

let app: FastifyInstance;
let port: number;
let listed: FastifyInstance;
let listedPort: number;

async function serve(env: Record<string, string>, host = "127.0.0.1"): Promise<[FastifyInstance, number]> {
  const server = await buildHttpApp(testRuntime(demoServer, { env }));
  await server.listen({ host, port: 0 });
  return [server, (server.server.address() as AddressInfo).port];
}

beforeAll(async () => {
  [app, port] = await serve({});
  [listed, listedPort] = await serve({ ALLOWED_ORIGINS: "http://localhost:6274" });
});
afterAll(async () => {
  await app?.close();
  await listed?.close();
});

/** A page's fetch() of POST /actions/echo_name: status, the CORS header (can the page read it?), the error. */
async function post(target: number, origin: string, host = `127.0.0.1:${target}`) {
  const res = await request(`http://127.0.0.1:${target}/actions/echo_name`, {
    method: "POST",
    headers: {
      host,
      origin,
      "content-type": "application/json",
      "sec-fetch-mode": "cors",
      "sec-fetch-site": "same-site",
    },
    body: JSON.stringify({ name: "example.com" }),
  });
  const body = (await res.body.json()) as { error?: { message: string; hint?: string } };
  return { status: res.statusCode, cors: res.headers["access-control-allow-origin"], error: body.error };
}

describe("the Origin rule: this server's own origin and ALLOWED_ORIGINS, nothing else", () => {
  it("another local user can listen on 127.0.0.2 and [::1] at our port (the attack's premise)", async () => {
    for (const address of ["127.0.0.2", "::1"]) {
      const squatter = createServer().listen(port, address);
      await once(squatter, "listening");
      squatter.close();
    }
  });

  it.each([
    ["a page on 127.0.0.2 at our port", () => `http://127.0.0.2:${port}`],
    ["a page on [::1] at our port", () => `http://[::1]:${port}`],
    ["a page on another loopback port", () => "http://127.0.0.1:8080"],
    ["the MCP Inspector's direct mode, unlisted", () => "http://localhost:6274"],
    ["our own address over https (another scheme)", () => `https://127.0.0.1:${port}`],
  ])("%s gets 403 and no CORS on POST", async (_, origin) => {
    const res = await post(port, origin());
    expect(res.status).toBe(403);
    expect(res.cors).toBeUndefined();
    expect(res.error?.message).toBe("Origin not allowed");
    expect(res.error?.hint).toContain(`ALLOWED_ORIGINS=${origin()}`);
  });

  it("a page on [::1] at our port may not open a tool stream either", async () => {
    const res = await request(`http://127.0.0.1:${port}/sse/echo_name?name=example.com`, {
      headers: { origin: `http://[::1]:${port}`, "sec-fetch-mode": "cors", "sec-fetch-dest": "empty" },
    });
    expect(res.statusCode).toBe(403);
    expect(await res.body.text()).toContain("Origin not allowed");
  });

  it("our own origin, by address or as localhost, is served with CORS", async () => {
    for (const [origin, host] of [
      [`http://127.0.0.1:${port}`, `127.0.0.1:${port}`],
      [`http://localhost:${port}`, `127.0.0.1:${port}`],
      [`http://localhost:${port}`, `localhost:${port}`],
    ] as const) {
      const res = await post(port, origin, host);
      expect(res.status).toBe(200);
      expect(res.cors).toBe(origin);
    }
  });

  it("ALLOWED_ORIGINS=http://localhost:6274 lets the Inspector in: preflight and call", async () => {
    const pre = await request(`http://127.0.0.1:${listedPort}/mcp`, {
      method: "OPTIONS",
      headers: { origin: "http://localhost:6274", "access-control-request-method": "POST" },
    });
    await pre.body.dump();
    expect(pre.statusCode).toBe(204);
    expect(pre.headers["access-control-allow-origin"]).toBe("http://localhost:6274");
    const res = await post(listedPort, "http://localhost:6274");
    expect(res.status).toBe(200);
    expect(res.cors).toBe("http://localhost:6274");
    // Listing one origin lets in that one only.
    expect((await post(listedPort, "http://localhost:6275")).status).toBe(403);
  });

  it("a wildcard bind holds every IPv4 address at its port: 127.0.0.2 is ours there, [::1] is not", async () => {
    const [wide, widePort] = await serve(
      { HOST: "0.0.0.0", ALLOW_UNAUTHENTICATED: "1", ALLOW_PLAINTEXT: "1" },
      "0.0.0.0",
    );
    try {
      expect((await post(widePort, `http://127.0.0.2:${widePort}`)).status).toBe(200);
      expect((await post(widePort, `http://[::1]:${widePort}`)).status).toBe(403);
    } finally {
      await wide.close();
    }
  });
});

/**
 * Regression (stop 24's attacker review, F10): the rule accepted Origin strings no browser sends and echoed them
 * in Access-Control-Allow-Origin (an upper-case scheme, userinfo, a trailing `/`, `127.1`, `2130706433`), and an
 * IP-literal Host with the same Origin counted as our own origin for an address we are neither bound to nor
 * reached on. Only the serialized origin a browser sends is served, and only an address that reaches us.
 */
describe("only an Origin as a browser serializes it, for an address that reaches us", () => {
  it.each([
    ["an upper-case scheme", () => `HTTP://127.0.0.1:${port}`],
    ["userinfo", () => `http://a@127.0.0.1:${port}`],
    ["a trailing /", () => `http://127.0.0.1:${port}/`],
    ["a path", () => `http://127.0.0.1:${port}/x`],
    ["127.1 for 127.0.0.1", () => `http://127.1:${port}`],
    ["2130706433 for 127.0.0.1", () => `http://2130706433:${port}`],
    ["an upper-case name", () => `http://LOCALHOST:${port}`],
    ["a port with a leading zero", () => `http://127.0.0.1:0${port}`],
  ])("%s: 403, nothing echoed", async (_, origin) => {
    const res = await post(port, origin());
    expect(res.status).toBe(403);
    expect(res.cors).toBeUndefined();
  });

  it("the same origins are refused at a preflight, with no CORS header", async () => {
    const pre = await request(`http://127.0.0.1:${port}/mcp`, {
      method: "OPTIONS",
      headers: { origin: `HTTP://127.0.0.1:${port}`, "access-control-request-method": "POST" },
    });
    await pre.body.dump();
    expect(pre.statusCode).toBe(403);
    expect(pre.headers["access-control-allow-origin"]).toBeUndefined();
  });

  it("an IP-literal Host and Origin for an address that is not ours: 403", async () => {
    for (const address of ["10.9.9.9", "127.0.0.2", "[::1]"]) {
      const res = await post(port, `http://${address}:${port}`, `${address}:${port}`);
      expect(res.status, address).toBe(403);
      expect(res.cors, address).toBeUndefined();
    }
  });

  it("with a wildcard bind, an address of no interface here is not ours either", async () => {
    const [wide, widePort] = await serve(
      { HOST: "0.0.0.0", ALLOW_UNAUTHENTICATED: "1", ALLOW_PLAINTEXT: "1" },
      "0.0.0.0",
    );
    try {
      const res = await post(widePort, `http://10.9.9.9:${widePort}`, `10.9.9.9:${widePort}`);
      expect(res.status).toBe(403);
      expect(res.cors).toBeUndefined();
    } finally {
      await wide.close();
    }
  });

  it("our own address, in the form a browser sends it, is still served", async () => {
    const res = await post(port, `http://127.0.0.1:${port}`);
    expect(res.status).toBe(200);
    expect(res.cors).toBe(`http://127.0.0.1:${port}`);
  });
});
