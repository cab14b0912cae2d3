/**
 * Our own verdict, from every response at once, strongest evidence first: the network says so (CAPPORT),
 * 511, a redirect to another host, a page where a known answer was due, a page with a login form or a
 * redirect of its own where no answer is known, TLS interception. A network that does not answer at all is
 * "no connectivity", not a portal; empty answers are a proxy, not a portal.
 */
import { type HopResponse, type HttpProbeResult, isRedirectStatus, shownUrl } from "@roadnerd/conventions";
import { describeExpected, type Expected } from "./known-answers.ts";
import { pageEvidence, siteOf } from "./page-evidence.ts";

export interface ProbeRun {
  url: string;
  /** The known answer; null for a test URL whose answer nobody knows. */
  expect: Expected | null;
  /** Absent when the policy denied the URL (`denied` says why). */
  result?: HttpProbeResult;
  denied?: string;
}

export interface Assessment {
  suspected: boolean;
  reason: string;
  portalUrl?: string;
}

const hostOf = (url: string) => new URL(url).host;
const trusted = (h: HopResponse) => h.tls === null || h.tls.authorized;
/** Android ignores 200s of 4 bytes or less: nobody can log in on an empty page. */
const EMPTY_BYTES = 4;

export function matches(expect: Expected | null, r: HttpProbeResult | undefined): boolean {
  const f = r?.final;
  if (!r || !f || r.failure || r.stopped || !r.hops.every(trusted)) return false;
  if (expect === null) return true;
  if (expect.status !== undefined && f.status !== expect.status) return false;
  if (expect.body === undefined) return true;
  return f.bodyComplete && f.body.trimEnd() === expect.body.trimEnd();
}

/** The first redirect of a run that leaves the site it was sent to. */
function crossHostRedirect(run: ProbeRun): { hop: HopResponse; to: URL } | undefined {
  const start = siteOf(new URL(run.url).hostname);
  for (const hop of run.result?.hops ?? []) {
    if (!isRedirectStatus(hop.status) || hop.redirectUrl === null) continue;
    const to = new URL(hop.redirectUrl);
    if (siteOf(to.hostname) !== start) return { hop, to };
  }
  return undefined;
}

/** Where a 511 page points: a meta refresh, else the first absolute link. */
function linkIn(hop: HopResponse): string | undefined {
  const found =
    /http-equiv=["']?refresh["']?[^>]*url=([^"'>\s]+)/i.exec(hop.body)?.[1] ??
    /href=["'](https?:\/\/[^"']+)["']/i.exec(hop.body)?.[1] ??
    /https?:\/\/[^\s"'<>]+/i.exec(hop.body)?.[0];
  if (!found) return undefined;
  try {
    return shownUrl(new URL(found, hop.url).href);
  } catch {
    return undefined;
  }
}

const where = (url: string) => shownUrl(url, 120);

export function assess(
  runs: readonly ProbeRun[],
  capport: { captive: boolean | null; user_portal_url?: string } | undefined,
): Assessment {
  if (capport?.captive === true) {
    const portalUrl = capport.user_portal_url;
    return {
      suspected: true,
      reason: `the network's CAPPORT API says captive${portalUrl ? `; log in at ${portalUrl}` : ""}`,
      ...(portalUrl ? { portalUrl } : {}),
    };
  }
  for (const run of runs) {
    const hop = run.result?.hops.find((h) => h.status === 511);
    if (hop) {
      const portalUrl = linkIn(hop);
      return {
        suspected: true,
        reason: `${where(hop.url)} answered 511 Network Authentication Required`,
        ...(portalUrl ? { portalUrl } : {}),
      };
    }
  }
  for (const run of runs) {
    const cross = crossHostRedirect(run);
    if (cross) {
      const portalUrl = shownUrl(cross.to.href);
      return {
        suspected: true,
        reason: `${where(run.url)} was redirected (${cross.hop.status}) to ${cross.to.host}`,
        portalUrl,
      };
    }
  }
  for (const run of runs) {
    const f = run.result?.final;
    if (run.expect === null || !f || matches(run.expect, run.result) || run.result?.failure) continue;
    if (f.status >= 200 && f.status < 300 && f.bodyBytes > EMPTY_BYTES) {
      const expected = describeExpected(run.expect);
      return {
        suspected: true,
        reason: `${where(run.url)} should give ${expected} but gave ${f.status} with a ${f.bodyBytes}${f.bodyComplete ? "" : "+"}-byte page: a login page`,
        portalUrl: shownUrl(f.url),
      };
    }
  }
  for (const run of runs) {
    const f = run.result?.final;
    if (run.expect !== null || !f || run.result?.failure || f.status < 200 || f.status >= 300) continue;
    const page = pageEvidence(f);
    if (page) {
      return {
        suspected: true,
        reason: `${where(run.url)} answered ${f.status} with ${page.says}`,
        portalUrl: page.target ?? shownUrl(f.url),
      };
    }
  }
  for (const run of runs) {
    const bad = run.result?.hops.find((h) => !trusted(h));
    if (bad) {
      return {
        suspected: true,
        reason: `TLS interception? ${hostOf(bad.url)} sent a certificate that is not trusted (${bad.tls?.authorizationError})`,
      };
    }
  }
  return notSuspected(runs);
}

function notSuspected(runs: readonly ProbeRun[]): Assessment {
  const answered = runs.filter((r) => r.result?.final);
  if (answered.length === 0) {
    const first = runs.find((r) => r.result?.failure)?.result?.failure;
    const why = first ? `${first.code}: ${first.detail}` : "every target was denied by policy";
    return { suspected: false, reason: `no answer from any probe (${why}): no connectivity, not a portal` };
  }
  const probes = runs.filter((r) => r.expect !== null);
  const failed = probes.filter((r) => !matches(r.expect, r.result));
  if (failed.length === 0) {
    return {
      suspected: false,
      reason: probes.length
        ? `no portal: ${probes.length} probe(s) got their expected answers`
        : `no portal: ${where(runs[0]?.url ?? "")} answered without a redirect to another host`,
    };
  }
  const empty = failed.find((r) => r.result?.final?.status === 200 && r.result.final.bodyBytes <= EMPTY_BYTES);
  if (empty)
    return {
      suspected: false,
      reason: `no login page, but ${where(empty.url)} gave an empty 200: a proxy is interfering`,
    };
  const odd = failed.find((r) => r.result?.final) ?? failed[0];
  const got = odd?.result?.final ? `${odd.result.final.status}` : (odd?.result?.failure?.code ?? "E_FORBIDDEN");
  return {
    suspected: false,
    reason: `no portal seen, but ${where(odd?.url ?? "")} gave an unexpected answer (${got})`,
  };
}
