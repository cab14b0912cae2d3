/**
 * captive_portal_check against the real built server and a captive portal this test runs on loopback
 * (network on 127.0.0.1, login page on 127.0.0.2). Every kind of portal is detected, a clean network is
 * not flagged, and each OS's verdict is exact. The spec's default test URL is never used: CAPTIVE_TEST_URL
 * and CAPTIVE_PROBES point at loopback, and the real probe hosts are denied by name before any lookup.
 */
import { createClient, type RoadNerdClient } from "@roadnerd/client";
import type { ResultOf } from "@roadnerd/conventions";
import {
  type CapportApi,
  type CaptivePortal,
  CLOSED_PORT,
  diagRoutes,
  generateTestCerts,
  LOGIN_PAGE,
  NM_EXPECTED_BODY,
  PLAIN_PAGE,
  REAL_PROBE_HOSTS_DENY,
  type SpawnedServer,
  scaledDeadline,
  spawnServer,
  startCapportApi,
  startCaptivePortal,
  startTestServer,
  type TestCerts,
  type TestServer,
  WELL_KNOWN_ANSWERS,
} from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CAPTIVE_PROBES, DEFAULT_TEST_URL } from "../../src/captive-config.ts";
import { server } from "../../src/server.ts";
import type { captivePortalCheck } from "../../src/tools/captive-portal-check.ts";

/** The config the server would run with, parsed by the kernel exactly as at start-up. */
const loadCaptiveConfig = (env: NodeJS.ProcessEnv) => server.loadConfig(env);

const SAFETY_ENV = { OUTBOUND_DENY: REAL_PROBE_HOSTS_DENY };

type Captive = ResultOf<typeof captivePortalCheck>;

let certs: TestCerts;
let portal: CaptivePortal;
let intercept: TestServer;
let capport: CapportApi;
let badCapport: CapportApi;
const spawned: SpawnedServer[] = [];
let main: RoadNerdClient;
let interceptClient: RoadNerdClient;
let deadClient: RoadNerdClient;
const closedPort = CLOSED_PORT;

const probesEnv = (probes: Array<{ url: string; expect: number | string }>) => JSON.stringify(probes);

beforeAll(async () => {
  certs = await generateTestCerts();
  [portal, intercept] = await Promise.all([
    startCaptivePortal(),
    startTestServer(diagRoutes(), { tls: certs.wrongName }),
  ]);
  [capport, badCapport] = await Promise.all([
    startCapportApi(certs.valid, portal.loginUrl),
    startCapportApi(certs.wrongName, portal.loginUrl),
  ]);
  const base = { ...SAFETY_ENV, NODE_EXTRA_CA_CERTS: certs.caFile, CAPTIVE_TEST_URL: `${portal.url}/` };
  const honest = [
    { url: `${portal.url}/generate_204`, expect: 204 },
    { url: `${portal.url}/expected`, expect: NM_EXPECTED_BODY },
  ];
  // Each server is tracked as soon as it runs, so a failed start of another cannot leak it.
  const start = (env: Record<string, string>) =>
    spawnServer("network", { env: { ...base, ...env } }).then((s) => {
      spawned.push(s);
      return s;
    });
  const servers = await Promise.all([
    start({ CAPTIVE_PROBES: probesEnv(honest) }),
    start({
      CAPTIVE_PROBES: probesEnv([
        { url: `${intercept.url}/generate_204`, expect: 204 },
        honest[1] as (typeof honest)[1],
      ]),
    }),
    start({
      CAPTIVE_TEST_URL: `http://127.0.0.1:${closedPort}/`,
      CAPTIVE_PROBES: probesEnv([
        { url: `http://127.0.0.1:${closedPort}/generate_204`, expect: 204 },
        { url: `http://127.0.0.1:${closedPort}/expected`, expect: NM_EXPECTED_BODY },
      ]),
    }),
  ]);
  [main, interceptClient, deadClient] = servers.map((s) => createClient(s.url)) as [
    RoadNerdClient,
    RoadNerdClient,
    RoadNerdClient,
  ];
});

afterAll(async () => {
  try {
    await Promise.allSettled([
      ...spawned.map((s) => s.stop()),
      portal?.close(),
      intercept?.close(),
      capport?.close(),
      badCapport?.close(),
    ]);
  } finally {
    await certs?.cleanup();
  }
});

const check = (input: Record<string, unknown> = {}, c = main) =>
  c.call<Captive>("captive_portal_check", { ...scaledDeadline(), ...input });
const loginHost = () => new URL(portal.loginUrl).host;

describe("captive_portal_check: clean network", () => {
  it("no portal: every probe matched, every OS online", async () => {
    portal.mode = "open";
    const r = await check();
    expect(r).toMatchObject({
      suspected: false,
      final_url: `${portal.url}/`,
      redirects: [],
      status: 200,
      reason: "no portal: 2 probe(s) got their expected answers",
      verdicts: {
        android: "online",
        chrome: "online",
        networkmanager: "online",
        windows_ncsi: "online",
        apple: "online",
      },
    });
    expect(r.portal_url).toBeUndefined();
    expect(r.probes).toEqual([
      { url: `${portal.url}/generate_204`, expected: 204, status: 204, matched: true, redirects: 0 },
      { url: `${portal.url}/expected`, expected: NM_EXPECTED_BODY, status: 200, matched: true, redirects: 0 },
    ]);
    expect(r.summary).toBe("no captive portal: 2 probe(s) got their expected answers");
  });

  it("same-host redirects to the real answers are not a portal, though OSes that do not follow them disagree", async () => {
    portal.mode = "sameHostRedirect";
    const r = await check();
    expect(r.suspected).toBe(false);
    expect(r.redirects).toEqual([{ status: 302, host: new URL(portal.url).host }]);
    expect(r.probes.map((p) => [p.status, p.matched, p.redirects])).toEqual([
      [204, true, 1],
      [200, true, 1],
    ]);
    expect(r.verdicts).toEqual({
      android: "portal",
      chrome: "online",
      networkmanager: "portal",
      windows_ncsi: "online",
      apple: "portal",
    });
  });
});

describe("captive_portal_check: each kind of portal", () => {
  it("a redirect to a login page on another host", async () => {
    portal.mode = "redirect";
    const r = await check();
    const login = `${portal.loginUrl}?continue=%2F`;
    expect(r).toMatchObject({
      suspected: true,
      final_url: login,
      redirects: [{ status: 302, host: loginHost() }],
      status: 200,
      reason: `${portal.url}/ was redirected (302) to ${loginHost()}`,
      portal_url: login,
      verdicts: {
        android: "portal",
        chrome: "portal",
        networkmanager: "portal",
        windows_ncsi: "portal",
        apple: "portal",
      },
    });
    expect(r.probes.map((p) => [p.status, p.matched, p.redirects])).toEqual([
      [200, false, 1],
      [200, false, 1],
    ]);
    expect(r.summary).toBe(`captive portal suspected: ${r.reason} (portal: ${login})`);
  });

  it("511 Network Authentication Required, with the login link from its page", async () => {
    portal.mode = "status511";
    const r = await check();
    expect(r).toMatchObject({
      suspected: true,
      status: 511,
      redirects: [],
      reason: `${portal.url}/ answered 511 Network Authentication Required`,
      portal_url: portal.loginUrl,
      // Android treats 511 as a failed probe (not 200..399); Chrome names it a portal.
      verdicts: {
        android: "no_internet",
        chrome: "portal",
        networkmanager: "portal",
        windows_ncsi: "portal",
        apple: "portal",
      },
    });
  });

  it("200 with a login page where 204 was due", async () => {
    portal.mode = "login200";
    const r = await check();
    expect(r).toMatchObject({
      suspected: true,
      status: 200,
      redirects: [],
      reason: `${portal.url}/generate_204 should give status 204 but gave 200 with a ${LOGIN_PAGE.length}-byte page: a login page`,
      portal_url: `${portal.url}/generate_204`,
      verdicts: {
        android: "portal",
        chrome: "portal",
        networkmanager: "portal",
        windows_ncsi: "portal",
        apple: "portal",
      },
    });
    expect(r.probes.map((p) => p.matched)).toEqual([false, false]);
  });

  it("empty 200s: no login page (a proxy), and the OSes split on it", async () => {
    portal.mode = "empty200";
    const r = await check();
    expect(r).toMatchObject({
      suspected: false,
      reason: `no login page, but ${portal.url}/generate_204 gave an empty 200: a proxy is interfering`,
      // Android: Content-Length <= 4 is a failed probe; Chrome: a 0-1 byte 200 counts as connected.
      verdicts: {
        android: "no_internet",
        chrome: "online",
        networkmanager: "portal",
        windows_ncsi: "portal",
        apple: "portal",
      },
    });
  });

  it("TLS interception: an https probe answered with a certificate for another name", async () => {
    portal.mode = "open";
    const r = await check({}, interceptClient);
    expect(r).toMatchObject({
      suspected: true,
      reason: `TLS interception? ${new URL(intercept.url).host} sent a certificate that is not trusted (ERR_TLS_CERT_ALTNAME_INVALID)`,
      verdicts: {
        android: "no_internet",
        chrome: "no_internet",
        networkmanager: "online",
        windows_ncsi: "online",
        apple: "online",
      },
    });
    expect(r.portal_url).toBeUndefined();
    expect(r.probes[0]).toEqual({
      url: `${intercept.url}/generate_204`,
      expected: 204,
      status: 204,
      matched: false,
      redirects: 0,
      detail: "certificate not trusted (ERR_TLS_CERT_ALTNAME_INVALID)",
    });
  });
});

describe("captive_portal_check: a test_url whose answer is known, stated or unknown", () => {
  // deadClient's own probes are refused: the test URL's answer is the only evidence.
  const test = (test_url: string, extra: Record<string, unknown> = {}) => check({ test_url, ...extra }, deadClient);

  it("a 200 login page where generate_204 was asked is a portal, whatever host answered", async () => {
    portal.mode = "login200";
    const r = await test(`${portal.url}/generate_204`);
    expect(r).toMatchObject({
      suspected: true,
      reason: `${portal.url}/generate_204 should give status 204 but gave 200 with a ${LOGIN_PAGE.length}-byte page: a login page`,
      test_expected: { status: 204 },
      test_matched: false,
    });
  });

  it.each(Object.keys(WELL_KNOWN_ANSWERS))("%s on a free network is known and matched, so no portal", async (path) => {
    portal.mode = "open";
    const r = await test(`${portal.url}${path}`);
    expect(r.suspected, r.reason).toBe(false);
    expect(r.test_matched).toBe(true);
    expect(r.test_expected).toBeDefined();
  });

  it.each(["/hotspot-detect.html", "/connecttest.txt", "/success.txt"])(
    "%s answered by a login page is a portal",
    async (path) => {
      portal.mode = "login200";
      const r = await test(`${portal.url}${path}`);
      expect(r.suspected).toBe(true);
      expect(r.reason).toContain(`${portal.url}${path} should give its expected text but gave 200`);
    },
  );

  it("unknown answer: a 200 page with a login or terms form", async () => {
    portal.mode = "login200";
    const r = await test(`${portal.url}/`);
    expect(r).toMatchObject({ suspected: true, reason: `${portal.url}/ answered 200 with a login form` });
    expect(r.test_expected).toBeUndefined();
  });

  it("unknown answer: a meta refresh to another host", async () => {
    portal.mode = "metaRefresh200";
    const r = await test(`${portal.url}/some/page`);
    expect(r).toMatchObject({
      suspected: true,
      reason: `${portal.url}/some/page answered 200 with a meta refresh to ${loginHost()}`,
      portal_url: portal.loginUrl,
    });
  });

  it("unknown answer: a script redirect to another host", async () => {
    portal.mode = "scriptRedirect200";
    const r = await test(`${portal.url}/`);
    expect(r).toMatchObject({
      suspected: true,
      reason: `${portal.url}/ answered 200 with a script redirect to ${loginHost()}`,
      portal_url: portal.loginUrl,
    });
  });

  it("unknown answer: a plain page is no evidence", async () => {
    portal.mode = "open";
    const r = await test(`${portal.url}/`);
    expect(r.suspected).toBe(false);
  });

  it("expect_status and expect_body state the answer of any URL", async () => {
    portal.mode = "open";
    const plain = await test(`${portal.url}/`, { expect_body: PLAIN_PAGE });
    expect(plain).toMatchObject({ suspected: false, test_expected: { status: 200 }, test_matched: true });
    const other = await test(`${portal.url}/`, { expect_body: "hello from the real site" });
    expect(other).toMatchObject({ suspected: true, test_matched: false });
    expect(other.reason).toBe(
      `${portal.url}/ should give its expected text but gave 200 with a ${PLAIN_PAGE.length}-byte page: a login page`,
    );
    const status = await test(`${portal.url}/`, { expect_status: 204 });
    expect(status).toMatchObject({ suspected: true, test_expected: { status: 204 }, test_matched: false });
  });
});

describe("captive_portal_check: RFC 8908 CAPPORT API", () => {
  it("the API says captive: suspected even when the probes look clean; Android follows the API", async () => {
    portal.mode = "open";
    capport.state.captive = true;
    const r = await check({ capport_url: capport.url });
    expect(r).toMatchObject({
      suspected: true,
      reason: `the network's CAPPORT API says captive; log in at ${portal.loginUrl}`,
      portal_url: portal.loginUrl,
      capport: { url: capport.url, captive: true, user_portal_url: portal.loginUrl, seconds_remaining: 0 },
      verdicts: {
        android: "portal",
        chrome: "online",
        networkmanager: "online",
        windows_ncsi: "online",
        apple: "online",
      },
    });
  });

  it("the API says not captive", async () => {
    capport.state.captive = false;
    const r = await check({ capport_url: capport.url });
    expect(r.suspected).toBe(false);
    expect(r.capport).toEqual({
      url: capport.url,
      captive: false,
      user_portal_url: portal.loginUrl,
      seconds_remaining: 3600,
    });
  });

  it("an API with an untrusted certificate is ignored, as RFC 8908 requires", async () => {
    const r = await check({ capport_url: badCapport.url });
    expect(r.capport).toEqual({
      url: badCapport.url,
      captive: null,
      detail: "certificate not trusted (ERR_TLS_CERT_ALTNAME_INVALID): answer ignored",
    });
    expect(r.verdicts.android).toBe("online");
  });

  it("a plain-http API URL is not asked", async () => {
    const r = await check({ capport_url: `${portal.url}/capport` });
    expect(r.capport).toEqual({
      url: `${portal.url}/capport`,
      captive: null,
      detail: "not asked: RFC 8908 requires an https:// API URL",
    });
  });
});

describe("captive_portal_check: no network, bad input", () => {
  it("nothing answers: no connectivity, not a portal; every OS says no internet", async () => {
    const r = await check({}, deadClient);
    expect(r).toMatchObject({
      suspected: false,
      status: null,
      error: "E_CONN_REFUSED",
      detail: `connection refused (address 127.0.0.1:${closedPort})`,
      reason: `no answer from any probe (E_CONN_REFUSED: connection refused (address 127.0.0.1:${closedPort})): no connectivity, not a portal`,
      verdicts: {
        android: "no_internet",
        chrome: "no_internet",
        networkmanager: "no_internet",
        windows_ncsi: "no_internet",
        apple: "no_internet",
      },
    });
    expect(r.probes.map((p) => [p.status, p.matched, p.error])).toEqual([
      [null, false, "E_CONN_REFUSED"],
      [null, false, "E_CONN_REFUSED"],
    ]);
  });

  it("an explicit test_url is used instead of the default", async () => {
    portal.mode = "open";
    const r = await check({ test_url: `${portal.url}/some/page` });
    expect(r.final_url).toBe(`${portal.url}/some/page`);
  });

  it("the safety net holds: the spec's default host is denied by name, before any lookup", async () => {
    await expect(check({ test_url: DEFAULT_TEST_URL })).rejects.toMatchObject({
      code: "E_FORBIDDEN",
      message: "target denied by OUTBOUND_DENY: neverssl.com",
    });
  });

  it("a test_url the policy denies is 403 E_FORBIDDEN", async () => {
    await expect(check({ test_url: "http://169.254.169.254/" })).rejects.toMatchObject({
      code: "E_FORBIDDEN",
      status: 403,
    });
  });

  it("unknown keys and non-http URLs are E_INVALID_INPUT", async () => {
    await expect(check({ url: "http://x/" })).rejects.toMatchObject({ code: "E_INVALID_INPUT", status: 400 });
    await expect(check({ test_url: "file:///etc/passwd" })).rejects.toMatchObject({ code: "E_INVALID_INPUT" });
  });
});

describe("captive-config: env read through zod", () => {
  it("defaults: the spec's test URL and the OSes' own probes", () => {
    const config = loadCaptiveConfig({});
    expect(config.CAPTIVE_PROBES).toEqual(DEFAULT_CAPTIVE_PROBES);
    expect(config.CAPPORT_URL).toBeUndefined();
    expect(config.CAPTIVE_TEST_URL).toBe(DEFAULT_TEST_URL);
    expect(DEFAULT_TEST_URL).toBe("http://neverssl.com");
  });

  it("CAPTIVE_PROBES must be a JSON list of {url, expect}", () => {
    expect(() => loadCaptiveConfig({ CAPTIVE_PROBES: "http://x/generate_204" })).toThrow(
      /CAPTIVE_PROBES: expected JSON like/,
    );
    expect(() => loadCaptiveConfig({ CAPTIVE_PROBES: '[{"url":"http://x/","expect":true}]' })).toThrow(
      /CAPTIVE_PROBES/,
    );
    expect(() => loadCaptiveConfig({ CAPTIVE_PROBES: "[]" })).toThrow(/CAPTIVE_PROBES/);
    expect(loadCaptiveConfig({ CAPTIVE_PROBES: '[{"url":"http://127.0.0.1/g","expect":204}]' }).CAPTIVE_PROBES).toEqual(
      [{ url: "http://127.0.0.1/g", expect: 204 }],
    );
  });
});
