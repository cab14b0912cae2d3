/**
 * head against HTTP and HTTPS servers this test starts on loopback: exact status, masked headers, the redirect
 * not followed (Location reported) unless asked, timings; refusals before any connection.
 */
import { callTool } from "@roadnerd/conventions/testing";
import {
  CLOSED_PORT,
  generateTestCerts,
  scaledDeadline,
  startTestServer,
  type TestCerts,
  type TestServer,
} from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { server } from "../../src/server.ts";
import { head } from "../../src/tools/head.ts";

const ENV = { OUTBOUND_ALLOW: "127.0.0.1" };
let web: TestServer;
let tls: TestServer;
let outside: TestServer;
let certs: TestCerts;

beforeAll(async () => {
  certs = await generateTestCerts();
  const handler = (req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => {
    if (req.url === "/moved") return void res.writeHead(302, { location: "/login?token=s3cret" }).end();
    res.writeHead(200, {
      "content-type": "text/html",
      "set-cookie": "session=abc123",
      "x-powered-by": "portal",
    });
    res.end("<title>x</title>");
  };
  web = await startTestServer(handler);
  tls = await startTestServer(handler, { tls: certs.selfSigned });
  outside = await startTestServer(handler, { host: "127.0.0.2" });
});

afterAll(async () => {
  await web?.close();
  await tls?.close();
  await outside?.close();
  await certs?.cleanup();
});

describe("head", () => {
  it("answers status, masked headers and timings, with one HEAD request", async () => {
    const r = await callTool(server, head, { ...scaledDeadline(), url: `${web.url}/` }, { env: ENV });
    expect(r).toMatchObject({ url: `${web.url}/`, status: 200, location: null, truncated: false, omitted: 0 });
    expect(r.headers).toMatchObject({
      "content-type": "text/html",
      "set-cookie": "[masked]",
      "x-powered-by": "portal",
    });
    expect(r.timing_ms.total).toBeGreaterThan(0);
    expect(r.timing_ms.tls).toBe(0);
    expect(r.error).toBeUndefined();
    expect(web.requests.at(-1)).toBe("HEAD /");
    expect(r.summary).toMatch(/→ 200 in [\d.]+ ms$/);
  });

  it("does not follow a redirect by default and reports where it points (secrets masked)", async () => {
    const r = await callTool(server, head, { ...scaledDeadline(), url: `${web.url}/moved` }, { env: ENV });
    expect(r.status).toBe(302);
    expect(r.location).toBe(`${web.url}/login?token=%5Bmasked%5D`);
    expect(r.final_url).toBeUndefined();
    expect(web.requests.filter((q) => q.startsWith("HEAD /login"))).toHaveLength(0);
  });

  it("follows the redirect when asked, each hop checked", async () => {
    const r = await callTool(
      server,
      head,
      { ...scaledDeadline(), url: `${web.url}/moved`, follow: true },
      { env: ENV },
    );
    expect(r).toMatchObject({ status: 200, location: null, final_url: `${web.url}/login?token=%5Bmasked%5D` });
  });

  it("over https it reports even a self-signed server, with a TLS timing", async () => {
    const r = await callTool(server, head, { ...scaledDeadline(), url: `${tls.url}/` }, { env: ENV });
    expect(r.status).toBe(200);
    expect(r.timing_ms.tls).toBeGreaterThan(0);
  });

  it("a closed port is a diagnosis, not a failure", async () => {
    const r = await callTool(
      server,
      head,
      { ...scaledDeadline(), url: `http://127.0.0.1:${CLOSED_PORT}/` },
      { env: ENV },
    );
    expect(r).toMatchObject({ status: null, error: "E_CONN_REFUSED", headers: {} });
    expect(r.detail).toContain(`127.0.0.1:${CLOSED_PORT}`);
  });

  it("a target outside OUTBOUND_ALLOW is refused before any connection", async () => {
    await expect(
      callTool(server, head, { ...scaledDeadline(), url: `${outside.url}/` }, { env: ENV }),
    ).rejects.toMatchObject({
      code: "E_FORBIDDEN",
      message: expect.stringContaining("not in OUTBOUND_ALLOW"),
    });
    expect(outside.connections()).toBe(0);
  });

  it("without OUTBOUND_ALLOW every target is refused, naming the variable", async () => {
    await expect(callTool(server, head, { ...scaledDeadline(), url: `${web.url}/` })).rejects.toMatchObject({
      code: "E_FORBIDDEN",
      message: expect.stringMatching(/^webcheck reaches no target until OUTBOUND_ALLOW names it: 127\.0\.0\.1/),
      hint: expect.stringContaining("OUTBOUND_ALLOW="),
    });
    expect(web.requests.filter((q) => q === "HEAD /")).toHaveLength(1);
  });

  it("a redirect to a target outside OUTBOUND_ALLOW is refused when followed", async () => {
    const hop = await startTestServer((_req, res) => res.writeHead(302, { location: `${outside.url}/` }).end());
    try {
      await expect(
        callTool(server, head, { ...scaledDeadline(), url: `${hop.url}/`, follow: true }, { env: ENV }),
      ).rejects.toMatchObject({
        code: "E_FORBIDDEN",
      });
      expect(outside.connections()).toBe(0);
    } finally {
      await hop.close();
    }
  });
});
