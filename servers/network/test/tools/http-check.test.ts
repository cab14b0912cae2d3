/**
 * http_check against the real built server, fetching only servers this test starts on 127.0.0.0/8.
 * The server trusts the test CA through NODE_EXTRA_CA_CERTS, so `authorized` is exact for every cert.
 */
import { createClient, type RoadNerdClient } from "@roadnerd/client";
import type { ResultOf } from "@roadnerd/conventions";
import {
  CLOSED_PORT,
  diagRoutes,
  generateTestCerts,
  REAL_PROBE_HOSTS_DENY,
  type SpawnedServer,
  scaledDeadline,
  spawnServer,
  startTestServer,
  type TestCerts,
  type TestServer,
} from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { httpCheck } from "../../src/tools/http-check.ts";

/** Belt and braces: the real probe hosts are denied by name, before any lookup, in case a default leaks. */
const SAFETY_ENV = { OUTBOUND_DENY: REAL_PROBE_HOSTS_DENY };

type HttpCheck = ResultOf<typeof httpCheck>;

let certs: TestCerts;
const web: Record<string, TestServer> = {};
const spawned: SpawnedServer[] = [];
let server: SpawnedServer | undefined;
let restricted: SpawnedServer | undefined;
let client: RoadNerdClient;
let restrictedClient: RoadNerdClient;
const closedPort = CLOSED_PORT;

beforeAll(async () => {
  certs = await generateTestCerts();
  const routes = diagRoutes();
  const [plain, other, valid, expired, wrongName] = await Promise.all([
    startTestServer(routes),
    startTestServer(routes, { host: "127.0.0.2" }),
    startTestServer(routes, { tls: certs.valid, h2: true }),
    startTestServer(routes, { tls: certs.expired }),
    startTestServer(routes, { tls: certs.wrongName }),
  ]);
  Object.assign(web, { plain, other, valid, expired, wrongName });
  const env = { ...SAFETY_ENV, NODE_EXTRA_CA_CERTS: certs.caFile };
  // Each server is tracked as soon as it runs, so a failed start of the other cannot leak it.
  const track = (s: SpawnedServer) => {
    spawned.push(s);
    return s;
  };
  [server, restricted] = await Promise.all([
    spawnServer("network", { env }).then(track),
    spawnServer("network", { env: { ...env, OUTBOUND_ALLOW: "127.0.0.1/32" } }).then(track),
  ]);
  client = createClient(server.url);
  restrictedClient = createClient(restricted.url);
});

afterAll(async () => {
  try {
    await Promise.allSettled([...spawned.map((s) => s.stop()), ...Object.values(web).map((s) => s.close())]);
  } finally {
    await certs?.cleanup();
  }
});

const check = (input: Record<string, unknown>, c = client) =>
  c.call<HttpCheck>("http_check", { ...scaledDeadline(), ...input });

describe("http_check: answers", () => {
  it("GET: status, headers with secrets masked, timings, no TLS for http", async () => {
    const r = await check({ url: `${web.plain?.url}/ok`, run_id: "hc-1" });
    expect(r.status).toBe(200);
    expect(r.redirects).toEqual([]);
    expect(r.final_url).toBeUndefined();
    expect(r.headers).toMatchObject({
      "set-cookie": "[masked]",
      authorization: "[masked]",
      "x-api-key": "[masked]",
      "x-visible": "plain value",
      "content-type": "text/plain",
    });
    expect(JSON.stringify(r)).not.toMatch(/s3cr3t|leaked-token|k-123456/);
    expect(r.tls).toBeUndefined();
    expect(r.timing_ms.dns).toBe(0);
    expect(r.timing_ms.tls).toBe(0);
    expect(r.timing_ms.total).toBeGreaterThanOrEqual(r.timing_ms.connect);
    expect(r.run_id).toBe("hc-1");
    expect(r.summary).toBe(`${web.plain?.url}/ok → 200 in ${r.timing_ms.total} ms`);
    expect(r.error).toBeUndefined();
  });

  it("HEAD works, and the method is case-insensitive", async () => {
    expect((await check({ url: `${web.plain?.url}/ok`, method: "HEAD" })).status).toBe(200);
    expect((await check({ url: `${web.plain?.url}/ok`, method: "head" })).status).toBe(200);
  });

  it("headers are capped with `limit` and say how many were left out", async () => {
    const r = await check({ url: `${web.plain?.url}/ok`, limit: 2 });
    expect(Object.keys(r.headers)).toHaveLength(2);
    expect(r.truncated).toBe(true);
    expect(r.omitted).toBeGreaterThan(0);
  });

  it("secrets in the URL are masked in the echo", async () => {
    const r = await check({ url: `${web.plain?.url}/ok?token=abc123` });
    expect(r.url).toBe(`${web.plain?.url}/ok?token=%5Bmasked%5D`);
  });
});

describe("http_check: redirects, each hop checked", () => {
  it("a chain: exact hops, final URL", async () => {
    const base = web.plain?.url;
    const r = await check({ url: `${base}/redirect/3` });
    expect(r.redirects).toEqual([
      { status: 302, location: `${base}/redirect/2` },
      { status: 302, location: `${base}/redirect/1` },
      { status: 302, location: `${base}/ok` },
    ]);
    expect(r.status).toBe(200);
    expect(r.final_url).toBe(`${base}/ok`);
    expect(r.summary).toBe(`${base}/redirect/3 → 200 after 3 redirect(s) in ${r.timing_ms.total} ms`);
  });

  it("follow: false stops at the first answer", async () => {
    const r = await check({ url: `${web.plain?.url}/redirect/3`, follow: false });
    expect(r.status).toBe(302);
    expect(r.redirects).toEqual([{ status: 302, location: `${web.plain?.url}/redirect/2` }]);
  });

  it("more than 5 redirects: stops and says so", async () => {
    const r = await check({ url: `${web.plain?.url}/redirect/7` });
    expect(r.redirects).toHaveLength(6);
    expect(r.status).toBe(302);
    expect(r.detail).toBe(`stopped after 5 redirects: ${web.plain?.url}/redirect/1`);
  });

  it("a redirect to cloud metadata is 403 E_FORBIDDEN", async () => {
    const to = encodeURIComponent("http://169.254.169.254/latest/meta-data/");
    await expect(check({ url: `${web.plain?.url}/to?url=${to}` })).rejects.toMatchObject({
      code: "E_FORBIDDEN",
      status: 403,
      message: "target denied (cloud metadata, link-local or unroutable): 169.254.169.254",
    });
  });

  it("a redirect to a host outside OUTBOUND_ALLOW is 403 E_FORBIDDEN", async () => {
    const to = encodeURIComponent(`${web.other?.url}/ok`);
    expect((await check({ url: `${web.plain?.url}/ok` }, restrictedClient)).status).toBe(200);
    await expect(check({ url: `${web.plain?.url}/to?url=${to}` }, restrictedClient)).rejects.toMatchObject({
      code: "E_FORBIDDEN",
      status: 403,
      message: "target not in OUTBOUND_ALLOW: 127.0.0.2",
    });
    expect(web.other?.connections()).toBe(0);
  });
});

describe("http_check: TLS facts, valid or not", () => {
  it("a valid certificate from a trusted CA, h2 by ALPN", async () => {
    const r = await check({ url: `${web.valid?.url}/ok` });
    expect(r.status).toBe(200);
    expect(r.tls).toEqual({
      alpn: "h2",
      cert_expiry_days: 89,
      hostname_ok: true,
      authorized: true,
      authorization_error: null,
      issuer: "RoadNerd Test CA",
    });
    expect(r.timing_ms.tls).toBeGreaterThan(0);
    expect(r.summary).toBe(`${web.valid?.url}/ok → 200 in ${r.timing_ms.total} ms; TLS h2, cert ok, expires in 89 d`);
  });

  it("an expired certificate is reported, and the page is still checked", async () => {
    const r = await check({ url: `${web.expired?.url}/ok` });
    expect(r.status).toBe(200);
    expect(r.tls).toEqual({
      alpn: "http/1.1",
      cert_expiry_days: -1,
      hostname_ok: true,
      authorized: false,
      authorization_error: "CERT_HAS_EXPIRED",
      issuer: "RoadNerd Test CA",
    });
  });

  it("a certificate for the wrong name", async () => {
    const r = await check({ url: `${web.wrongName?.url}/ok` });
    expect(r.tls).toEqual({
      alpn: "http/1.1",
      cert_expiry_days: 89,
      hostname_ok: false,
      authorized: false,
      authorization_error: "ERR_TLS_CERT_ALTNAME_INVALID",
      issuer: "RoadNerd Test CA",
    });
  });

  it("https to a plain-HTTP port: a TLS handshake diagnosis", async () => {
    const r = await check({ url: `https://127.0.0.1:${web.plain?.port}/` });
    expect(r.status).toBeNull();
    expect(r.error).toBe("E_TLS");
    expect(r.detail).toMatch(new RegExp(`^TLS handshake failed \\(address 127\\.0\\.0\\.1:${web.plain?.port}\\): `));
  });
});

describe("http_check: failures are diagnoses (200 with error)", () => {
  it("a closed port is E_CONN_REFUSED", async () => {
    const r = await check({ url: `http://127.0.0.1:${closedPort}/` });
    expect(r).toMatchObject({
      status: null,
      error: "E_CONN_REFUSED",
      detail: `connection refused (address 127.0.0.1:${closedPort})`,
      redirects: [],
      headers: {},
    });
    expect(r.summary).toBe(
      `http://127.0.0.1:${closedPort}/ → E_CONN_REFUSED: connection refused (address 127.0.0.1:${closedPort})`,
    );
  });

  it("a slow first byte shows in ttfb", async () => {
    const r = await check({ url: `${web.plain?.url}/slow?ms=400`, timeout_ms: 15_000 });
    expect(r.status).toBe(200);
    expect(r.timing_ms.ttfb).toBeGreaterThanOrEqual(390);
  });

  it("a first byte later than timeout_ms is E_TIMEOUT, answered within the deadline", async () => {
    const started = performance.now();
    const r = await check({ url: `${web.plain?.url}/slow?ms=5000`, timeout_ms: 500 });
    // Never waited for the server's answer at 5 s (room left for a loaded machine); the probe's own deadline
    // is the call's, less the kernel's margin.
    expect(performance.now() - started).toBeLessThan(4500);
    expect(r.status).toBeNull();
    expect(r.error).toBe("E_TIMEOUT");
    const detail = new RegExp(
      `^no response headers before the deadline \\(address 127\\.0\\.0\\.1:${web.plain?.port}, timeout (\\d+) ms\\)$`,
    ).exec(r.detail ?? "");
    expect(Number(detail?.[1])).toBeLessThanOrEqual(500);
    expect(r.timing_ms.connect).toBeLessThan(500);
  });
});

describe("http_check: bad input", () => {
  it("POST (or any other method) is 501 E_UNSUPPORTED, not 400", async () => {
    for (const method of ["POST", "DELETE", "PUT", "TRACE"]) {
      await expect(check({ url: `${web.plain?.url}/ok`, method })).rejects.toMatchObject({
        code: "E_UNSUPPORTED",
        status: 501,
      });
    }
    expect(web.plain?.requests.filter((r) => !r.startsWith("GET") && !r.startsWith("HEAD"))).toEqual([]);
  });

  it.each([
    [{ Host: "evil.example" }, "header Host is set by the probe itself"],
    [{ connection: "upgrade" }, "header connection is set by the probe itself"],
    [{ "transfer-encoding": "chunked" }, "header transfer-encoding is set by the probe itself"],
    [{ "bad name": "x" }, "not a header name: bad name"],
    [{ "x-a": "one\ntwo" }, "headers.x-a: control characters are not allowed"],
    [{ "x-a": "line\u2028sep" }, "header x-a: only printable Latin-1 characters"],
    [{ "x-a": "emoji 🙂" }, "header x-a: only printable Latin-1 characters"],
    [Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`x-h${i}`, "v"])), "at most 20 headers"],
  ])("headers %j are refused with E_INVALID_INPUT", async (headers, message) => {
    await expect(check({ url: `${web.plain?.url}/ok`, headers })).rejects.toMatchObject({
      code: "E_INVALID_INPUT",
      status: 400,
      message: expect.stringContaining(message),
    });
  });

  it.each([["ftp://127.0.0.1/"], ["not a url"], ["-http://x"]])("url %s is E_INVALID_INPUT", async (url) => {
    await expect(check({ url })).rejects.toMatchObject({ code: "E_INVALID_INPUT", status: 400 });
  });
});
