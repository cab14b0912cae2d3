/**
 * proxy_connectivity_test against real proxies (npm `proxy`) and real http/https targets on loopback: each
 * phase's failure named, the policy applied to the proxy hop and to the target before anything is sent.
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
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { server } from "../../src/server.ts";
import { proxyConnectivityTest } from "../../src/tools/proxy-connectivity-test.ts";
import { PROXY_VARIABLES } from "../../src/tools/proxy-env-status.ts";
import { type ForwardProxy, startForwardProxy } from "../helpers/forward-proxy.ts";

let certs: TestCerts;
let web: TestServer;
let secure: TestServer;
let expired: TestServer;
let selfSigned: TestServer;
let open: ForwardProxy;
let authed: ForwardProxy;
let strict: ForwardProxy;

const ok = (_req: unknown, res: import("node:http").ServerResponse) => res.writeHead(200).end("ok");

beforeAll(async () => {
  certs = await generateTestCerts();
  web = await startTestServer(ok);
  secure = await startTestServer(ok, { tls: certs.valid });
  expired = await startTestServer(ok, { tls: certs.expired });
  selfSigned = await startTestServer(ok, { tls: certs.selfSigned });
  open = await startForwardProxy();
  authed = await startForwardProxy({ auth: { user: "alice", password: "s3cret" } });
  strict = await startForwardProxy({ refuseConnectTo80: true });
});
afterAll(async () => {
  for (const s of [web, secure, expired, selfSigned, open, authed, strict]) await s?.close();
  await certs?.cleanup();
});
afterEach(() => {
  vi.unstubAllEnvs();
  vi.useRealTimers();
});

const realSetTimeout = globalThis.setTimeout;

const env = (extra: Record<string, string> = {}) => ({
  env: { OUTBOUND_ALLOW: "127.0.0.1", PROXY_CA_FILE: certs.caFile, ...extra },
});

describe("proxy_connectivity_test through a real proxy", () => {
  it("http through an open proxy: absolute-form GET, no CONNECT", async () => {
    const before = open.seen.length;
    const r = await callTool(
      server,
      proxyConnectivityTest,
      { ...scaledDeadline(), url: `${web.url}/plain`, proxy: open.url },
      env(),
    );
    expect(r).toMatchObject({ via_proxy: true, proxy: open.url, proxy_from: "input", status: 200 });
    expect(r.error).toBeUndefined();
    expect(open.seen.slice(before)).toEqual([`GET ${web.url}/plain`]);
    expect(web.requests.at(-1)).toBe("GET /plain");
    expect(r.timing_ms.tunnel).toBe(0);
    expect(r.summary).toMatch(/HTTP 200 in [\d.]+ ms$/);
  });

  it("https through CONNECT, the target's certificate checked against PROXY_CA_FILE", async () => {
    const r = await callTool(
      server,
      proxyConnectivityTest,
      { ...scaledDeadline(), url: `${secure.url}/s`, proxy: open.url },
      env(),
    );
    expect(r).toMatchObject({ via_proxy: true, status: 200, tls: { authorized: true, authorization_error: null } });
    expect(open.seen.at(-1)).toBe(`CONNECT 127.0.0.1:${secure.port}`);
    expect(secure.requests.at(-1)).toBe("GET /s");
  });

  it("reports an expired and a self-signed certificate through the tunnel, still answering the status", async () => {
    const e = await callTool(
      server,
      proxyConnectivityTest,
      { ...scaledDeadline(), url: `${expired.url}/`, proxy: open.url },
      env(),
    );
    expect(e).toMatchObject({ status: 200, tls: { authorized: false, authorization_error: "CERT_HAS_EXPIRED" } });
    const s = await callTool(
      server,
      proxyConnectivityTest,
      { ...scaledDeadline(), url: `${selfSigned.url}/`, proxy: open.url },
      env(),
    );
    expect(s.tls?.authorized).toBe(false);
    expect(s.tls?.authorization_error).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY/);
  });

  it("407 from a proxy that wants credentials: the phase, the scheme asked for, nothing leaked", async () => {
    const http = await callTool(
      server,
      proxyConnectivityTest,
      { ...scaledDeadline(), url: `${web.url}/`, proxy: authed.url },
      env(),
    );
    expect(http).toMatchObject({ error: "E_CONN_REFUSED", phase: "ttfb", proxy_status: 407 });
    expect(http.proxy_authenticate).toMatch(/^Basic/);
    const https = await callTool(
      server,
      proxyConnectivityTest,
      { ...scaledDeadline(), url: `${secure.url}/`, proxy: authed.url },
      env(),
    );
    expect(https).toMatchObject({ error: "E_CONN_REFUSED", phase: "tunnel", proxy_status: 407 });
    expect(https.detail).toMatch(/wants credentials/);
  });

  it("Basic credentials in the proxy address are sent, and masked in every output", async () => {
    const proxy = `http://alice:s3cret@127.0.0.1:${authed.port}`;
    const http = await callTool(
      server,
      proxyConnectivityTest,
      { ...scaledDeadline(), url: `${web.url}/a`, proxy },
      env(),
    );
    expect(http).toMatchObject({ status: 200, proxy: `http://[masked]@127.0.0.1:${authed.port}` });
    const bare = `alice:s3cret@127.0.0.1:${authed.port}`;
    const https = await callTool(
      server,
      proxyConnectivityTest,
      { ...scaledDeadline(), url: `${secure.url}/a`, proxy: bare },
      env(),
    );
    expect(https).toMatchObject({ status: 200, proxy: `[masked]@127.0.0.1:${authed.port}` });
    expect(JSON.stringify([http, https])).not.toContain("s3cret");
    expect(http.summary).not.toContain("s3cret");
  });

  it("a proxy that refuses CONNECT to port 80 still carries plain http (no tunnel for http targets)", async () => {
    // undici 7's ProxyAgent would tunnel this through CONNECT and get the 403.
    const r = await callTool(
      server,
      proxyConnectivityTest,
      { ...scaledDeadline(), url: `${web.url}/p`, proxy: strict.url },
      env(),
    );
    expect(r).toMatchObject({ status: 200 });
    expect(strict.seen.at(-1)).toBe(`GET ${web.url}/p`);
  });

  it("speaks TLS to an https:// proxy, then CONNECT and TLS with the target inside", async () => {
    const tlsProxy = await startForwardProxy({ tls: certs.valid });
    try {
      const r = await callTool(
        server,
        proxyConnectivityTest,
        { ...scaledDeadline(), url: `${secure.url}/t`, proxy: tlsProxy.url },
        env(),
      );
      expect(r).toMatchObject({ via_proxy: true, status: 200, tls: { authorized: true } });
      expect(tlsProxy.seen).toEqual([`CONNECT 127.0.0.1:${secure.port}`]);
      // A plain-http proxy port answered with TLS: the proxy's own handshake fails, and says so.
      const wrong = await callTool(
        server,
        proxyConnectivityTest,
        { ...scaledDeadline(), url: `${secure.url}/`, proxy: `https://127.0.0.1:${open.port}` },
        env(),
      );
      expect(wrong).toMatchObject({ error: "E_TLS", phase: "proxy_tls" });
    } finally {
      await tlsProxy.close();
    }
  });

  it("names the phase: proxy connect refused, target refused behind the proxy, target TLS", async () => {
    const dead = await callTool(
      server,
      proxyConnectivityTest,
      { ...scaledDeadline(), url: `${web.url}/`, proxy: `http://127.0.0.1:${CLOSED_PORT}` },
      env(),
    );
    expect(dead).toMatchObject({ error: "E_CONN_REFUSED", phase: "proxy_connect" });
    expect(dead.detail).toContain(`127.0.0.1:${CLOSED_PORT}`);
    const behind = await callTool(
      server,
      proxyConnectivityTest,
      { ...scaledDeadline(), url: `https://127.0.0.1:${CLOSED_PORT}/`, proxy: open.url },
      env(),
    );
    expect(behind).toMatchObject({ error: "E_CONN_REFUSED", phase: "tunnel" });
    expect(behind.proxy_status).toBeGreaterThanOrEqual(400);
    // TLS spoken to a plain http port, through the tunnel.
    const tls = await callTool(
      server,
      proxyConnectivityTest,
      { ...scaledDeadline(), url: `https://127.0.0.1:${web.port}/`, proxy: open.url },
      env(),
    );
    expect(tls).toMatchObject({ error: "E_TLS", phase: "tls" });
  });

  it("times out in the phase that hung", async () => {
    const slow = await startTestServer((_req, res) => {
      setTimeout(() => res.writeHead(200).end(), 3000).unref();
    });
    try {
      // The deadline on the test's clock, advanced once the request has reached the target through the proxy:
      // the first byte is what hung, however long a loaded machine took to get there. Sockets stay real.
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
      vi.advanceTimersByTime(1000);
      const pending = callTool(
        server,
        proxyConnectivityTest,
        { ...scaledDeadline(), url: `${slow.url}/`, proxy: open.url, timeout_ms: 400 },
        env(),
      );
      for (let i = 0; i < 1000 && slow.requests.length === 0; i++) await new Promise((r) => realSetTimeout(r, 10));
      await vi.advanceTimersByTimeAsync(400);
      const r = await pending;
      expect(r).toMatchObject({ error: "E_TIMEOUT", phase: "ttfb" });
    } finally {
      await slow.close();
    }
  });
});

describe("the proxy from the environment", () => {
  it("takes this process's http_proxy (undici's rules), and goes direct for a NO_PROXY match", async () => {
    for (const name of PROXY_VARIABLES) vi.stubEnv(name, undefined);
    vi.stubEnv("HTTP_PROXY", open.url);
    const before = open.seen.length;
    const viaEnv = await callTool(server, proxyConnectivityTest, { ...scaledDeadline(), url: `${web.url}/env` }, env());
    expect(viaEnv).toMatchObject({ via_proxy: true, proxy_from: "HTTP_PROXY", status: 200 });
    // No https_proxy: undici sends https through the http proxy too.
    const httpsEnv = await callTool(
      server,
      proxyConnectivityTest,
      { ...scaledDeadline(), url: `${secure.url}/env` },
      env(),
    );
    expect(httpsEnv).toMatchObject({ via_proxy: true, proxy_from: "HTTP_PROXY", status: 200 });
    expect(open.seen.length).toBe(before + 2);
    vi.stubEnv("no_proxy", "127.0.0.1");
    const direct = await callTool(
      server,
      proxyConnectivityTest,
      { ...scaledDeadline(), url: `${web.url}/direct` },
      env(),
    );
    expect(direct).toMatchObject({ via_proxy: false, status: 200 });
    expect(direct.proxy).toBeUndefined();
    const forced = await callTool(
      server,
      proxyConnectivityTest,
      { ...scaledDeadline(), url: `${web.url}/forced`, proxy: "direct" },
      env(),
    );
    expect(forced.via_proxy).toBe(false);
    expect(open.seen.length).toBe(before + 2);
  });
});

describe("the policy: nothing reached until OUTBOUND_ALLOW names it", () => {
  it("refuses everything with no OUTBOUND_ALLOW, naming the variable, and sends nothing", async () => {
    const before = open.seen.length;
    const seenBefore = web.requests.length;
    await expect(
      callTool(server, proxyConnectivityTest, { ...scaledDeadline(), url: `${web.url}/`, proxy: open.url }),
    ).rejects.toMatchObject({
      code: "E_FORBIDDEN",
      message: expect.stringContaining("OUTBOUND_ALLOW"),
      hint: expect.stringContaining("OUTBOUND_ALLOW="),
    });
    await expect(
      callTool(server, proxyConnectivityTest, { ...scaledDeadline(), url: `${web.url}/` }),
    ).rejects.toMatchObject({
      code: "E_FORBIDDEN",
    });
    expect(open.seen.length).toBe(before);
    expect(web.requests.length).toBe(seenBefore);
  });

  it("never asks a proxy for a target the policy denies", async () => {
    const other = await startTestServer(ok, { host: "127.0.0.2" });
    try {
      const before = open.seen.length;
      for (const url of [`${other.url}/`, "http://169.254.169.254/latest/meta-data/", "http://[::ffff:a9fe:a9fe]/"]) {
        await expect(
          callTool(server, proxyConnectivityTest, { ...scaledDeadline(), url, proxy: open.url }, env()),
        ).rejects.toMatchObject({
          code: "E_FORBIDDEN",
        });
      }
      // A name the allowlist does not list and that does not resolve here cannot be judged: refused.
      await expect(
        callTool(
          server,
          proxyConnectivityTest,
          { ...scaledDeadline(), url: "http://intranet.invalid/", proxy: open.url },
          env(),
        ),
      ).rejects.toMatchObject({ code: "E_FORBIDDEN", message: expect.stringContaining("cannot judge") });
      expect(open.seen.length).toBe(before);
      expect(other.connections()).toBe(0);
    } finally {
      await other.close();
    }
  });

  it("checks the proxy hop too: a proxy outside the allowlist or at metadata is refused", async () => {
    const elsewhere = await startForwardProxy({ host: "127.0.0.3" });
    try {
      for (const proxy of [elsewhere.url, "http://169.254.169.254:80", "http://[fe80::1]:3128"]) {
        await expect(
          callTool(server, proxyConnectivityTest, { ...scaledDeadline(), url: `${web.url}/`, proxy }, env()),
        ).rejects.toMatchObject({
          code: "E_FORBIDDEN",
        });
      }
      expect(elsewhere.seen).toEqual([]);
    } finally {
      await elsewhere.close();
    }
  });
});

describe("bad input", () => {
  it.each([
    [{}, "url"],
    [{ url: "ftp://127.0.0.1/" }, "url"],
    [{ url: "not a url" }, "url"],
    [{ url: "http://127.0.0.1/", proxy: "http://" }, "proxy"],
    [{ url: "http://127.0.0.1/", proxy: "socks5://alice:s3cret@127.0.0.1:1080" }, "proxy"],
    [{ url: "http://127.0.0.1/", proxy: "http://alice:s3cret@" }, "proxy"],
    [{ url: "http://127.0.0.1/", proxy: 3128 }, "proxy"],
    [{ url: "http://127.0.0.1/", extra: 1 }, "valid keys"],
  ])("%j is refused", async (input, text) => {
    const before = open.seen.length;
    const err = await callTool(server, proxyConnectivityTest, input, env()).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "E_INVALID_INPUT", message: expect.stringContaining(text) });
    expect(JSON.stringify({ ...(err as object), message: (err as Error).message })).not.toContain("s3cret");
    expect(open.seen.length).toBe(before);
  });
});
