/**
 * httpRequest / httpProbe against servers this test starts on loopback. Names are answered by a fake
 * resolver (node:dns/promises is mocked), so no query leaves the machine.
 */
import { createServer, type Server } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  CLOSED_PORT,
  diagRoutes,
  generateTestCerts,
  OK_BODY,
  startTestServer,
  type TestCerts,
  type TestServer,
} from "../../../testkit/src/index.ts";
import { httpProbe, httpRequest } from "../../src/outbound/http-probe.ts";
import { createOutboundPolicy } from "../../src/outbound/index.ts";

/** Room for a loaded machine: tests that are not about a deadline never meet one (an answer costs no wait). */
const ROOMY_MS = 30_000;

const FAKE_DNS: Record<string, string[]> = { "portal.test": ["127.0.0.1"], "other.test": ["127.0.0.2"] };

vi.mock("node:dns/promises", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:dns/promises")>();
  const lookup = vi.fn(async (name: string) => {
    const addresses = FAKE_DNS[name];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  });
  return { ...actual, lookup, default: { ...actual, lookup } };
});

const policy = createOutboundPolicy({ allow: [], deny: [] });

/**
 * Deadlines and slow answers on the test's clock (the test servers run in this process too): a phase ends
 * when the test advances the clock, never because a loaded machine was slow. Sockets stay real.
 */
function fakeClock(): void {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
  // performance.now() on a live process is never 0: a phase mark taken at 0 would read as "not yet".
  vi.advanceTimersByTime(1000);
}
afterEach(() => {
  vi.useRealTimers();
});
const realSetTimeout = globalThis.setTimeout;

/** Wait (real clock, bounded) until the server has the request `line` one more time than `before`. */
async function requested(server: TestServer | undefined, line: string, before: number): Promise<void> {
  const count = () => server?.requests.filter((r) => r === line).length ?? 0;
  for (let i = 0; i < 1000 && count() <= before; i++) await new Promise((r) => realSetTimeout(r, 10));
  if (count() <= before) throw new Error(`the server never got ${line}`);
}
const asked = (server: TestServer | undefined, line: string) => server?.requests.filter((r) => r === line).length ?? 0;
let certs: TestCerts;
const servers: Record<string, TestServer> = {};
let garbage: Server;
let garbageUrl: string;
const closedPort = CLOSED_PORT;

beforeAll(async () => {
  certs = await generateTestCerts(["portal.test"]);
  const routes = diagRoutes();
  const [plain, v6, other, valid, h2, expired, wrongName] = await Promise.all([
    startTestServer(routes),
    startTestServer(routes, { host: "::1" }),
    startTestServer(routes, { host: "127.0.0.2" }),
    startTestServer(routes, { tls: certs.valid }),
    startTestServer(routes, { tls: certs.valid, h2: true }),
    startTestServer(routes, { tls: certs.expired }),
    startTestServer(routes, { tls: certs.wrongName }),
  ]);
  Object.assign(servers, { plain, v6, other, valid, h2, expired, wrongName });
  // A TCP server that answers with something that is not HTTP.
  garbage = createServer((s) => s.resume().end("SSH-2.0-OpenSSH_9.6\r\n\r\n"));
  await new Promise<void>((r) => garbage.listen(0, "127.0.0.1", r));
  garbageUrl = `http://127.0.0.1:${(garbage.address() as { port: number }).port}/`;
  // A port that was just free: nothing listens there.
});

afterAll(async () => {
  try {
    await Promise.allSettled([
      ...Object.values(servers).map((s) => s.close()),
      new Promise<void>((r) => (garbage ? garbage.close(() => r()) : r())),
    ]);
  } finally {
    await certs?.cleanup();
  }
});

describe("httpRequest: one pinned hop", () => {
  it("GET returns status, headers, the body prefix, the pinned address and timings", async () => {
    const r = await httpRequest(policy, `${servers.plain?.url}/ok`, { timeoutMs: ROOMY_MS });
    if (!r.ok) throw new Error(r.failure.detail);
    expect(r.response.status).toBe(200);
    expect(r.response.address).toBe("127.0.0.1");
    expect(r.response.body).toBe(OK_BODY);
    expect(r.response.bodyBytes).toBe(OK_BODY.length);
    expect(r.response.bodyComplete).toBe(true);
    expect(r.response.headers["set-cookie"]).toEqual(["session=s3cr3t-cookie; HttpOnly", "theme=dark"]);
    expect(r.response.tls).toBeNull();
    expect(r.response.timing.tls).toBe(0);
    expect(r.response.timing.dns).toBe(0);
    expect(r.response.timing.total).toBeGreaterThanOrEqual(r.response.timing.ttfb);
  });

  it("HEAD reads no body", async () => {
    const r = await httpRequest(policy, `${servers.plain?.url}/ok`, { timeoutMs: ROOMY_MS, method: "HEAD" });
    if (!r.ok) throw new Error(r.failure.detail);
    expect(r.response.status).toBe(200);
    expect(r.response.body).toBe("");
    expect(r.response.bodyBytes).toBe(0);
  });

  it("caps the body at maxBodyBytes and says it is incomplete", async () => {
    const r = await httpRequest(policy, `${servers.plain?.url}/big`, { timeoutMs: ROOMY_MS, maxBodyBytes: 4096 });
    if (!r.ok) throw new Error(r.failure.detail);
    expect(r.response.bodyBytes).toBe(4096);
    expect(r.response.bodyComplete).toBe(false);
  });

  it("a closed port is E_CONN_REFUSED with the address in the detail", async () => {
    const r = await httpRequest(policy, `http://127.0.0.1:${closedPort}/`, { timeoutMs: ROOMY_MS });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.failure).toMatchObject({ code: "E_CONN_REFUSED", phase: "connect" });
    expect(r.failure.detail).toBe(`connection refused (address 127.0.0.1:${closedPort})`);
  });

  it("a slow first byte shows in ttfb", async () => {
    fakeClock();
    const before = asked(servers.plain, "GET /slow?ms=300");
    const pending = httpRequest(policy, `${servers.plain?.url}/slow?ms=300`, { timeoutMs: ROOMY_MS });
    await requested(servers.plain, "GET /slow?ms=300", before);
    await vi.advanceTimersByTimeAsync(300);
    const r = await pending;
    if (!r.ok) throw new Error(r.failure.detail);
    // The 300 ms the server waited are the first byte's, none of them the connection's.
    expect(r.response.timing.ttfb).toBe(300);
    expect(r.response.timing.connect).toBe(0);
  });

  it("a first byte later than the deadline is E_TIMEOUT in the request phase, on time", async () => {
    fakeClock();
    const before = asked(servers.plain, "GET /slow?ms=5000");
    let settled = false;
    const pending = httpRequest(policy, `${servers.plain?.url}/slow?ms=5000`, { timeoutMs: 300 }).finally(() => {
      settled = true;
    });
    await requested(servers.plain, "GET /slow?ms=5000", before);
    await vi.advanceTimersByTimeAsync(299);
    await new Promise((r) => realSetTimeout(r, 50));
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const r = await pending;
    if (r.ok) throw new Error("expected a timeout");
    expect(r.failure.code).toBe("E_TIMEOUT");
    expect(r.failure.phase).toBe("request");
    expect(r.failure.detail).toBe(
      `no response headers before the deadline (address 127.0.0.1:${servers.plain?.port}, timeout 300 ms)`,
    );
  });

  it("the caller's signal aborts the hop as a timeout", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const r = await httpRequest(policy, `${servers.plain?.url}/slow?ms=5000`, {
      timeoutMs: ROOMY_MS,
      signal: controller.signal,
    });
    expect(r.ok ? "ok" : r.failure.code).toBe("E_TIMEOUT");
  });

  it("something that is not HTTP is a clear detail, not a crash", async () => {
    const r = await httpRequest(policy, garbageUrl, { timeoutMs: ROOMY_MS });
    if (r.ok) throw new Error("expected a failure");
    expect(r.failure.code).toBe("E_CONN_REFUSED");
    expect(r.failure.detail).toMatch(/^(not an HTTP response|connection closed before a complete response)/);
  });

  it("a name resolves through the policy and the connection is pinned to the checked address", async () => {
    const port = servers.plain?.port;
    const r = await httpRequest(policy, `http://portal.test:${port}/headers`, { timeoutMs: ROOMY_MS });
    if (!r.ok) throw new Error(r.failure.detail);
    expect(r.response.address).toBe("127.0.0.1");
    expect(JSON.parse(r.response.body).host).toBe(`portal.test:${port}`);
  });

  it("an IPv6 literal connects to exactly that address, brackets kept in the Host header", async () => {
    const r = await httpRequest(policy, `${servers.v6?.url}/headers`, { timeoutMs: ROOMY_MS });
    if (!r.ok) throw new Error(r.failure.detail);
    expect(r.response.address).toBe("::1");
    expect(JSON.parse(r.response.body).host).toBe(`[::1]:${servers.v6?.port}`);
  });

  it("a name that does not resolve is E_DNS_FAIL", async () => {
    const r = await httpRequest(policy, "http://nxdomain.test/", { timeoutMs: ROOMY_MS });
    if (r.ok) throw new Error("expected a failure");
    expect(r.failure).toMatchObject({ code: "E_DNS_FAIL", phase: "dns" });
    expect(r.failure.detail).toBe("nxdomain.test did not resolve (ENOTFOUND)");
  });

  it("only http and https URLs", async () => {
    await expect(httpRequest(policy, "ftp://127.0.0.1/", { timeoutMs: ROOMY_MS })).rejects.toMatchObject({
      code: "E_INVALID_INPUT",
    });
  });
});

describe("httpRequest: TLS facts, reported instead of refused", () => {
  it("a valid certificate: name ok, expiry in days, ALPN http/1.1; the test CA is not trusted in this process", async () => {
    const r = await httpRequest(policy, `${servers.valid?.url}/ok`, { timeoutMs: ROOMY_MS });
    if (!r.ok) throw new Error(r.failure.detail);
    expect(r.response.status).toBe(200);
    expect(r.response.tls).toMatchObject({
      alpn: "http/1.1",
      hostnameOk: true,
      certExpiryDays: 89,
      authorized: false,
      authorizationError: "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
      issuer: "RoadNerd Test CA",
    });
    expect(r.response.timing.tls).toBeGreaterThan(0);
  });

  it("SNI and the name check use the URL's host name", async () => {
    const r = await httpRequest(policy, `https://portal.test:${servers.valid?.port}/ok`, { timeoutMs: ROOMY_MS });
    if (!r.ok) throw new Error(r.failure.detail);
    expect(r.response.tls?.hostnameOk).toBe(true);
  });

  it("h2 is negotiated by ALPN when the server offers it", async () => {
    const r = await httpRequest(policy, `${servers.h2?.url}/ok`, { timeoutMs: ROOMY_MS });
    if (!r.ok) throw new Error(r.failure.detail);
    expect(r.response.tls?.alpn).toBe("h2");
    expect(r.response.body).toBe(OK_BODY);
  });

  it("an expired certificate: negative days and CERT_HAS_EXPIRED, the response still read", async () => {
    const r = await httpRequest(policy, `${servers.expired?.url}/ok`, { timeoutMs: ROOMY_MS });
    if (!r.ok) throw new Error(r.failure.detail);
    expect(r.response.status).toBe(200);
    expect(r.response.tls).toMatchObject({
      certExpiryDays: -1,
      hostnameOk: true,
      authorizationError: "CERT_HAS_EXPIRED",
    });
  });

  it("a certificate for another name: hostnameOk false", async () => {
    const r = await httpRequest(policy, `${servers.wrongName?.url}/ok`, { timeoutMs: ROOMY_MS });
    if (!r.ok) throw new Error(r.failure.detail);
    expect(r.response.tls).toMatchObject({ hostnameOk: false, subject: "wrong.example", authorized: false });
  });

  it("https to a plain-HTTP port is a TLS handshake failure with a clear detail", async () => {
    const r = await httpRequest(policy, `https://127.0.0.1:${servers.plain?.port}/`, { timeoutMs: ROOMY_MS });
    if (r.ok) throw new Error("expected a failure");
    expect(r.failure).toMatchObject({ code: "E_TLS", phase: "tls" });
    expect(r.failure.detail).toMatch(/^TLS handshake failed \(address 127\.0\.0\.1:\d+\): /);
  });
});

describe("httpProbe: redirects followed by hand, every hop checked", () => {
  it("follows a chain and records every hop", async () => {
    const r = await httpProbe(policy, `${servers.plain?.url}/redirect/3`, { timeoutMs: ROOMY_MS });
    expect(r.hops.map((h) => [h.status, h.location])).toEqual([
      [302, "/redirect/2"],
      [302, "/redirect/1"],
      [302, "/ok"],
      [200, null],
    ]);
    expect(r.finalUrl).toBe(`${servers.plain?.url}/ok`);
    expect(r.final?.body).toBe(OK_BODY);
    expect(r.stopped).toBeNull();
  });

  it("stops at maxRedirects and says so", async () => {
    const r = await httpProbe(policy, `${servers.plain?.url}/redirect/3`, { timeoutMs: ROOMY_MS, maxRedirects: 2 });
    expect(r.hops.map((h) => h.status)).toEqual([302, 302, 302]);
    expect(r.stopped).toEqual({
      url: `${servers.plain?.url}/ok`,
      reason: "redirect_limit",
      detail: "stopped after 2 redirects",
    });
  });

  it("followRedirects false returns the first answer", async () => {
    const r = await httpProbe(policy, `${servers.plain?.url}/redirect/3`, {
      timeoutMs: ROOMY_MS,
      followRedirects: false,
    });
    expect(r.hops.map((h) => h.status)).toEqual([302]);
  });

  it("a redirect to cloud metadata is E_FORBIDDEN, or a reported stop when asked", async () => {
    const to = `${servers.plain?.url}/to?url=${encodeURIComponent("http://169.254.169.254/latest/meta-data/")}`;
    await expect(httpProbe(policy, to, { timeoutMs: ROOMY_MS })).rejects.toMatchObject({ code: "E_FORBIDDEN" });
    const r = await httpProbe(policy, to, { timeoutMs: ROOMY_MS, deniedRedirect: "stop" });
    expect(r.stopped).toMatchObject({ url: "http://169.254.169.254/latest/meta-data/", reason: "denied" });
    expect(r.finalUrl).toBe(to);
  });

  it("a redirect to a non-http scheme is not followed", async () => {
    const to = `${servers.plain?.url}/to?url=${encodeURIComponent("file:///etc/passwd")}`;
    const r = await httpProbe(policy, to, { timeoutMs: ROOMY_MS });
    expect(r.stopped).toEqual({ url: "file:///etc/passwd", reason: "bad_location", detail: "not followed: file: URL" });
  });

  it("drops Authorization and Cookie when a redirect leaves the origin", async () => {
    const target = `${servers.other?.url}/headers`;
    const r = await httpProbe(policy, `${servers.plain?.url}/to?url=${encodeURIComponent(target)}`, {
      timeoutMs: ROOMY_MS,
      headers: { authorization: "Bearer abc", cookie: "a=b", "x-trace": "t1" },
    });
    const seen = JSON.parse(r.final?.body ?? "{}");
    expect(r.final?.address).toBe("127.0.0.2");
    expect(seen.authorization).toBeUndefined();
    expect(seen.cookie).toBeUndefined();
    expect(seen["x-trace"]).toBe("t1");
  });

  it("the deadline covers the whole chain", async () => {
    fakeClock();
    const to = `${servers.plain?.url}/to?url=${encodeURIComponent("/slow?ms=5000")}`;
    const before = asked(servers.plain, "GET /slow?ms=5000");
    const pending = httpProbe(policy, to, { timeoutMs: 300 });
    await requested(servers.plain, "GET /slow?ms=5000", before);
    await vi.advanceTimersByTimeAsync(300);
    const r = await pending;
    expect(r.hops.map((h) => h.status)).toEqual([302]);
    expect(r.failure).toMatchObject({ code: "E_TIMEOUT", phase: "request", url: `${servers.plain?.url}/slow?ms=5000` });
  });
});
