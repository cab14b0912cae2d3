/**
 * captive_portal_check: is a portal between us and the internet? Fetches the test URL (the spec's
 * neverssl.com by default) and the configured probes with known answers (a generate_204 URL, an
 * expected-body URL) in parallel, asks an RFC 8908 CAPPORT API when one is known, and reports our verdict,
 * the portal URL, and what Android, Chrome, NetworkManager, Windows and Apple would each conclude.
 */
import {
  cutText,
  DiagError,
  type HttpProbeResult,
  httpProbe,
  httpUrlField,
  isRedirectStatus,
  maskUrl,
  shownUrl,
  type ToolContext,
} from "@roadnerd/conventions";
import { z } from "zod";
import { type CapportInfo, capportResult, fetchCapport, probeError } from "../captive/capport.ts";
import { assess, matches, type ProbeRun } from "../captive/evidence.ts";
import { type Expected, expectation, expectedOf, knownAnswer } from "../captive/known-answers.ts";
import { osVerdicts } from "../captive/os-verdicts.ts";
import { DEFAULT_TEST_URL } from "../captive-config.ts";
import { defineTool, type NetworkConfig } from "../kit.ts";

const verdict = z.enum(["online", "portal", "no_internet", "unknown"]);

const probeOut = z.object({
  url: z.string().describe("probe URL"),
  expected: z.union([z.number(), z.string()]).describe("the answer a free network gives: status or exact body"),
  status: z.number().int().nullable().describe("status of the last response, null if none"),
  matched: z.boolean().describe("the expected answer came back (trusted TLS, no portal in the way)"),
  redirects: z.number().int().min(0).describe("redirect answers on the way"),
  error: probeError.optional().describe("why there was no answer"),
  detail: z.string().optional().describe("what failed or stopped"),
});

type ProbeOut = z.input<typeof probeOut>;

/** Portals put their forms and scripts after a lot of markup: read more of a page than a plain probe does. */
const PAGE_PREFIX_BYTES = 16 * 1024;

/** A configured probe: its answer is known by configuration. */
type ConfiguredRun = ProbeRun & { expect: Expected };

/** A URL the caller chose and the policy denies is the caller's error; a configured one is reported. */
async function reportingDenied<T>(
  userGiven: boolean,
  work: () => Promise<T>,
  denied: (message: string) => T,
): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!userGiven && err instanceof DiagError && err.code === "E_FORBIDDEN") return denied(err.message);
    throw err;
  }
}

function run<E extends Expected | null>(
  ctx: ToolContext<NetworkConfig>,
  url: string,
  expect: E,
  userGiven: boolean,
): Promise<ProbeRun & { expect: E }> {
  return reportingDenied<ProbeRun & { expect: E }>(
    userGiven,
    async () => {
      const result = await httpProbe(ctx.outbound, url, {
        signal: ctx.signal,
        timeoutMs: ctx.budget(),
        maxBodyBytes: PAGE_PREFIX_BYTES,
        // The portal's own login host may be outside the allowlist: the redirect is evidence enough.
        deniedRedirect: "stop",
      });
      return { url, expect, result };
    },
    (message) => ({ url, expect, denied: message }),
  );
}

function probeEntry(r: ConfiguredRun): ProbeOut {
  const res = r.result;
  const entry: ProbeOut = {
    url: shownUrl(r.url),
    expected: r.expect.body !== undefined ? cutText(r.expect.body, 120) : (r.expect.status ?? 200),
    status: res?.final?.status ?? null,
    matched: matches(r.expect, res),
    redirects: res ? res.hops.filter((h) => isRedirectStatus(h.status)).length : 0,
  };
  if (r.denied) return { ...entry, error: "E_FORBIDDEN", detail: cutText(r.denied, 200) };
  if (res?.failure) return { ...entry, error: res.failure.code, detail: res.failure.detail };
  if (res?.stopped) return { ...entry, detail: `${res.stopped.detail}: ${shownUrl(res.stopped.url, 160)}` };
  const untrusted = res?.hops.find((h) => h.tls && !h.tls.authorized);
  if (untrusted) return { ...entry, detail: `certificate not trusted (${untrusted.tls?.authorizationError})` };
  return entry;
}

function redirectsOf(result: HttpProbeResult | undefined): Array<{ status: number; host: string }> {
  const out: Array<{ status: number; host: string }> = [];
  for (const hop of result?.hops ?? []) {
    if (!isRedirectStatus(hop.status) || hop.location === null) continue;
    out.push({ status: hop.status, host: hop.redirectUrl === null ? "" : new URL(hop.redirectUrl).host });
  }
  return out;
}

async function capportFor(
  ctx: ToolContext<NetworkConfig>,
  url: string | undefined,
  userGiven: boolean,
): Promise<CapportInfo | undefined> {
  if (!url) return undefined;
  return reportingDenied(
    userGiven,
    () => fetchCapport(ctx.outbound, url, { signal: ctx.signal, timeoutMs: ctx.budget() }),
    (message) => ({ url: maskUrl(url), captive: null, error: "E_FORBIDDEN", detail: cutText(message, 200) }),
  );
}

/** What the caller says test_url answers on a free network. */
function statedExpectation(input: { expect_status?: number | undefined; expect_body?: string | undefined }) {
  if (input.expect_status === undefined && input.expect_body === undefined) return undefined;
  return expectation(input.expect_status, input.expect_body);
}

const shownExpected = (e: Expected) => ({
  ...(e.status === undefined ? {} : { status: e.status }),
  ...(e.body === undefined ? {} : { body: cutText(e.body, 120) }),
});

export const captivePortalCheck = defineTool({
  name: "captive_portal_check",
  summary: "Is a captive portal (hotel/airport Wi-Fi login) in the way? Verdict, portal URL.",
  openWorld: true,
  targets: { test_url: "url", capport_url: "url" },
  input: {
    test_url: httpUrlField.optional().describe(`plain-HTTP URL a portal would intercept (default ${DEFAULT_TEST_URL})`),
    expect_status: z
      .number()
      .int()
      .min(100)
      .max(599)
      .optional()
      .describe("the status test_url gives on a free network (known already for generate_204 and the like)"),
    expect_body: z
      .string()
      .min(1)
      .max(512)
      .optional()
      .describe("the exact body test_url gives on a free network, e.g. Microsoft Connect Test"),
    capport_url: httpUrlField.optional().describe("RFC 8908 CAPPORT API URL (https), e.g. from DHCP option 114"),
  },
  output: {
    suspected: z.boolean().describe("a captive portal is likely"),
    final_url: z.string().describe("where the test URL ended up"),
    redirects: z
      .array(
        z.object({
          status: z.number().int().describe("3xx status"),
          host: z.string().describe("redirect target host"),
        }),
      )
      .describe("redirects of the test URL"),
    reason: z.string().describe("the evidence, one line"),
    status: z.number().int().nullable().describe("test URL's last status, null if no answer"),
    test_expected: z
      .object({
        status: z.number().int().optional().describe("status due"),
        body: z.string().optional().describe("exact body due"),
      })
      .optional()
      .describe("the test URL's answer on a free network, when known (its path, or expect_status/expect_body)"),
    test_matched: z.boolean().optional().describe("the test URL gave that answer"),
    portal_url: z.string().optional().describe("the login page, when known"),
    capport: capportResult.optional().describe("what the RFC 8908 API said, when one is known"),
    probes: z.array(probeOut).describe("probes with a known answer"),
    verdicts: z
      .object({
        android: verdict.describe("Android NetworkMonitor's rule on the generate_204 probe"),
        chrome: verdict.describe("Chrome's captive portal detector on the generate_204 probe"),
        networkmanager: verdict.describe("NetworkManager's rule (body starts with) on the body probe"),
        windows_ncsi: verdict.describe("Windows NCSI's rule (200, body contains) on the body probe"),
        apple: verdict.describe("Apple's rule (first answer 200 with the text) on the body probe"),
      })
      .describe("what each OS would conclude from the same responses"),
    error: probeError.optional().describe("why the test URL gave no answer"),
    detail: z.string().optional().describe("test URL failure detail"),
  },
  example: { test_url: "http://neverssl.com/" },
  // The reason and the redirect are in the summary already: the fields a next step needs, and which OSes see a portal.
  view: (r) => ({
    suspected: r.suspected,
    status: r.status,
    portal_url: r.portal_url,
    error: r.error,
    os_see_portal: Object.entries(r.verdicts)
      .filter(([, v]) => v === "portal")
      .map(([os]) => os),
  }),
  summarize: (r) =>
    // The reason already opens with "portal:" or "no portal:"; say it once.
    `${r.suspected ? "captive portal suspected" : "no captive portal"}: ${r.reason.replace(/^(no )?portal:\s*/i, "")}` +
    (r.portal_url ? ` (portal: ${r.portal_url})` : ""),
  async handler(input, ctx) {
    const config = ctx.config;
    const testUrl = input.test_url ?? config.CAPTIVE_TEST_URL;
    const testExpected = statedExpectation(input) ?? knownAnswer(testUrl) ?? null;
    const [test, capport, ...probes] = await Promise.all([
      run(ctx, testUrl, testExpected, input.test_url !== undefined),
      capportFor(ctx, input.capport_url ?? config.CAPPORT_URL, input.capport_url !== undefined),
      ...config.CAPTIVE_PROBES.map((p) => run(ctx, p.url, expectedOf(p.expect), false)),
    ]);
    const verdictProbes = probes.filter((p) => p.result);
    const bodyProbe = verdictProbes.find((p) => p.expect.body !== undefined);
    const verdicts = osVerdicts({
      statusProbe: verdictProbes.find((p) => p.expect.body === undefined)?.result,
      bodyProbe:
        bodyProbe?.result && bodyProbe.expect.body !== undefined
          ? { result: bodyProbe.result, expected: bodyProbe.expect.body }
          : undefined,
      capportCaptive: capport?.captive ?? null,
    });
    const { suspected, reason, portalUrl } = assess([test, ...probes], capport);
    const failure = test.result?.failure;
    return {
      suspected,
      final_url: shownUrl(test.result?.finalUrl ?? testUrl),
      redirects: redirectsOf(test.result),
      reason,
      status: test.result?.final?.status ?? null,
      ...(testExpected
        ? { test_expected: shownExpected(testExpected), test_matched: matches(testExpected, test.result) }
        : {}),
      ...(portalUrl ? { portal_url: portalUrl } : {}),
      ...(capport ? { capport } : {}),
      probes: probes.map(probeEntry),
      verdicts,
      ...(failure ? { error: failure.code, detail: failure.detail } : {}),
    };
  },
});
