/**
 * The browser's proxy on its own, driven the way Chromium drives it: absolute-form GETs for http:// and CONNECT
 * for everything else. Allowed targets are forwarded to the checked address; refused ones get a marked 403 and
 * the target sees no connection; the browser-wide fallback refuses everything.
 */
import { request } from "node:http";
import { testRuntime } from "@roadnerd/conventions/testing";
import { startTestServer, type TestServer } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BLOCKED_HEADER, type FilterProxy, startFilterProxy } from "../../src/browser/filter-proxy.ts";
import { server } from "../../src/server.ts";

let inside: TestServer;
let outside: TestServer;
let proxy: FilterProxy;
let denyAll: FilterProxy;
let byCidr: FilterProxy;
const life = new AbortController();

beforeAll(async () => {
  inside = await startTestServer((req, res) => res.end(`inside ${req.method} ${req.url} host=${req.headers.host}`));
  outside = await startTestServer((_req, res) => res.end("outside"), { host: "127.0.0.2" });
  // The server's own policy, as its runtime builds it: allowlist-only, here allowing 127.0.0.1 alone.
  const { outbound } = testRuntime(server, { env: { OUTBOUND_ALLOW: "127.0.0.1" } });
  proxy = await startFilterProxy(outbound, life.signal);
  denyAll = await startFilterProxy(null, life.signal);
  const cidr = testRuntime(server, { env: { OUTBOUND_ALLOW: "127.0.0.1/32" } });
  byCidr = await startFilterProxy(cidr.outbound, life.signal);
});

afterAll(async () => {
  await proxy?.close();
  await denyAll?.close();
  await byCidr?.close();
  life.abort();
  await inside?.close();
  await outside?.close();
});

function viaProxy(
  p: FilterProxy,
  url: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const { port } = new URL(p.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: url, headers: { host: new URL(url).host } }, (res) => {
      let body = "";
      res.on("data", (c) => {
        body += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

function connectVia(p: FilterProxy, target: string): Promise<{ status: number; headers: Record<string, unknown> }> {
  const { port } = new URL(p.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method: "CONNECT", path: target });
    req.on("connect", (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, headers: res.headers });
    });
    req.on("error", reject);
    req.end();
  });
}

describe("filter proxy", () => {
  it("forwards an allowed http:// request with its Host header", async () => {
    const r = await viaProxy(proxy, `${inside.url}/page?q=1`);
    expect(r).toMatchObject({ status: 200, body: `inside GET /page?q=1 host=127.0.0.1:${inside.port}` });
  });

  it("marks every forwarded http:// request as a RoadNerd tool's (ADR 0047), whatever the page sent", async () => {
    const marked = await startTestServer((req, res) => res.end(`hop=${req.headers["x-roadnerd-hop"]}`));
    try {
      const r = await viaProxy(proxy, `${marked.url}/`);
      expect(r).toMatchObject({ status: 200, body: "hop=1" });
    } finally {
      await marked.close();
    }
  });

  it("tunnels CONNECT to an allowed target", async () => {
    expect(await connectVia(proxy, `127.0.0.1:${inside.port}`)).toMatchObject({ status: 200 });
  });

  it("refuses http:// and CONNECT outside the allowlist: a marked 403, recorded, nothing reaches the target", async () => {
    const r = await viaProxy(proxy, `${outside.url}/secret?token=abc`);
    expect(r.status).toBe(403);
    expect(r.headers[BLOCKED_HEADER]).toBe("1");
    expect(r.body).toContain("Blocked by webcheck");
    expect(await connectVia(proxy, `127.0.0.2:${outside.port}`)).toMatchObject({ status: 403 });
    expect(outside.connections()).toBe(0);
    expect(proxy.refusals).toEqual([
      { target: `${outside.url}/secret?token=%5Bmasked%5D`, reason: expect.stringContaining("not in OUTBOUND_ALLOW") },
      { target: `127.0.0.2:${outside.port}`, reason: expect.stringContaining("not in OUTBOUND_ALLOW") },
    ]);
    expect(proxy.refusedCount()).toBe(2);
  });

  it("refuses cloud metadata in any spelling", async () => {
    for (const target of ["169.254.169.254:80", "[::ffff:a9fe:a9fe]:80", "0xa9fea9fe:80"]) {
      expect((await connectVia(proxy, target)).status, target).toBe(403);
    }
  });

  it("the browser-wide fallback refuses even what the allowlist would allow", async () => {
    expect((await viaProxy(denyAll, `${inside.url}/`)).status).toBe(403);
    expect(await connectVia(denyAll, `127.0.0.1:${inside.port}`)).toMatchObject({ status: 403 });
    expect(denyAll.refusedCount()).toBe(2);
  });

  it("an allowed target that refuses the connection is a 502 naming the diagnosis", async () => {
    const r = await viaProxy(proxy, "http://127.0.0.1:1/");
    expect(r.status).toBe(502);
    expect(r.headers["x-webcheck-error"]).toBe("E_CONN_REFUSED");
    expect(proxy.failures.at(-1)).toMatchObject({ target: "127.0.0.1:1", code: "E_CONN_REFUSED" });
  });
});

describe("regression (issue 18): a page's names with a CIDR in OUTBOUND_ALLOW", () => {
  // localhost is in /etc/hosts as 127.0.0.1, inside the CIDR: reaching it would prove the name was looked up.
  it("a name the allowlist does not name is refused before any lookup (http:// and CONNECT)", async () => {
    const r = await viaProxy(byCidr, `http://localhost:${inside.port}/exfil`);
    expect(r.status).toBe(403);
    expect(r.headers[BLOCKED_HEADER]).toBe("1");
    expect((await connectVia(byCidr, `localhost:${inside.port}`)).status).toBe(403);
    expect(byCidr.refusals.map((x) => x.reason)).toEqual([
      expect.stringContaining("not looked up"),
      expect.stringContaining("not looked up"),
    ]);
  });

  it("the address itself, inside the CIDR, still goes through", async () => {
    expect((await viaProxy(byCidr, `${inside.url}/page`)).status).toBe(200);
  });
});
