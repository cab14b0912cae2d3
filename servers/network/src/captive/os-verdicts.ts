/**
 * The verdict each OS would reach on the responses we got, by its own published rule. The rules
 * differ — on redirects followed or not, on a 200 with an empty body, on 511, on prefix vs contains —
 * so the same network can be "portal" to one and "online" to another. Android and Chrome are judged on
 * the first status probe (a generate_204 URL), the others on the first expected-body probe, with that
 * probe's expected body standing in for each OS's own text.
 */
import type { HopResponse, HttpProbeResult } from "@roadnerd/conventions";

export type Verdict = "online" | "portal" | "no_internet" | "unknown";

export interface Verdicts {
  android: Verdict;
  chrome: Verdict;
  networkmanager: Verdict;
  windows_ncsi: Verdict;
  apple: Verdict;
}

/** A response an OS would have refused at the TLS layer is no answer at all. */
function usable(hop: HopResponse | null | undefined): hop is HopResponse {
  return !!hop && (hop.tls === null || hop.tls.authorized);
}

function header(hop: HopResponse, name: string): string | undefined {
  const v = hop.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Android (AOSP NetworkStack NetworkMonitor.sendHttpProbe + CaptivePortalProbeResult): redirects not
 * followed; a 200 without Content-Length and with an empty body, or with Content-Length <= 4, becomes a
 * failed probe ("Empty 200 response interpreted as failed response"); 204 is success; any other
 * 200..399 is a portal; everything else (511 included, network errors) is a failed validation.
 * A CAPPORT API that says captive wins ("capportData.isCaptive() → PORTAL_CODE").
 */
export function androidVerdict(probe: HttpProbeResult | undefined, capportCaptive: boolean | null): Verdict {
  if (capportCaptive === true) return "portal";
  if (!probe) return "unknown";
  const first = probe.hops[0];
  if (!usable(first)) return "no_internet";
  let code = first.status;
  if (code === 200) {
    const length = header(first, "content-length");
    if (length === undefined ? first.bodyBytes === 0 : Number(length) <= 4) code = 599;
  }
  if (code === 204) return "online";
  return code >= 200 && code <= 399 ? "portal" : "no_internet";
}

/**
 * Chrome (components/captive_portal/core/captive_portal_detector.cc, GetCaptivePortalResultFromResponse):
 * the loader follows redirects; a network error or 503 is no response; 511 is a portal; other codes
 * outside 2xx/3xx are no response; 204 is connected, and so is a 200 whose body is 0 or 1 bytes
 * ("consistent with AOSP" in its comment, yet the opposite of Android's rule); anything else is a portal.
 */
export function chromeVerdict(probe: HttpProbeResult | undefined): Verdict {
  if (!probe) return "unknown";
  if (probe.failure || !probe.hops.every((h) => usable(h))) return "no_internet";
  const last = probe.final;
  if (!last) return "no_internet";
  const code = last.status;
  if (code === 503) return "no_internet";
  if (code === 511) return "portal";
  if (code >= 400 || code < 200) return "no_internet";
  if (code === 204) return "online";
  if (code === 200 && last.bodyComplete && last.bodyBytes <= 1) return "online";
  return "portal";
}

/**
 * NetworkManager (src/core/nm-connectivity.c): curl without FOLLOWLOCATION; a transfer error is LIMITED;
 * the header "X-NetworkManager-Status: online" is FULL; otherwise the body must start with the expected
 * response ("expected response") whatever the status, else PORTAL ("unexpected response" / "unexpected
 * short response").
 */
export function networkManagerVerdict(probe: HttpProbeResult | undefined, expected: string): Verdict {
  if (!probe) return "unknown";
  const first = probe.hops[0];
  if (!usable(first)) return "no_internet";
  if (header(first, "x-networkmanager-status")?.toLowerCase() === "online") return "online";
  return first.body.startsWith(expected) ? "online" : "portal";
}

/**
 * Windows NCSI (Microsoft's NCSI troubleshooting reference: download connecttest.txt and make sure the
 * file contains "Microsoft Connect Test"; no answer → limited/no connectivity, a different answer → sign-in
 * needed). A download follows redirects, so the final response is judged.
 */
export function windowsNcsiVerdict(probe: HttpProbeResult | undefined, expected: string): Verdict {
  if (!probe) return "unknown";
  if (probe.failure || !probe.hops.every((h) => usable(h)) || !probe.final) return "no_internet";
  return probe.final.status === 200 && probe.final.body.includes(expected) ? "online" : "portal";
}

/**
 * Apple (captive.apple.com/hotspot-detect.html): anything other than a 200 with the Success page in the
 * body brings up the captive sheet; a redirect is such an answer, so the first response is judged.
 */
export function appleVerdict(probe: HttpProbeResult | undefined, expected: string): Verdict {
  if (!probe) return "unknown";
  const first = probe.hops[0];
  if (!usable(first)) return "no_internet";
  return first.status === 200 && first.body.includes(expected) ? "online" : "portal";
}

export interface VerdictInputs {
  /** The first probe that expects a status (generate_204 style). */
  statusProbe: HttpProbeResult | undefined;
  /** The first probe that expects a body, and that body. */
  bodyProbe: { result: HttpProbeResult; expected: string } | undefined;
  capportCaptive: boolean | null;
}

export function osVerdicts(inputs: VerdictInputs): Verdicts {
  const { statusProbe, bodyProbe } = inputs;
  const expected = bodyProbe?.expected ?? "";
  return {
    android: androidVerdict(statusProbe, inputs.capportCaptive),
    chrome: chromeVerdict(statusProbe),
    networkmanager: networkManagerVerdict(bodyProbe?.result, expected),
    windows_ncsi: windowsNcsiVerdict(bodyProbe?.result, expected),
    apple: appleVerdict(bodyProbe?.result, expected),
  };
}
