/**
 * RFC 8908 CAPPORT API: ask the network itself whether it holds us captive. The API must be https with a
 * certificate the client can verify (RFC 8908 §4, §4.1) and answers application/captive+json with at least
 * a boolean `captive` (§5). Android does the same when DHCP option 114 gives it the URL.
 */
import { DIAGNOSIS_CODES, httpProbe, maskUrl, type OutboundPolicy, shownUrl } from "@roadnerd/conventions";
import { z } from "zod";

export const CAPPORT_MEDIA_TYPE = "application/captive+json";

/** A diagnosis of a target that gave no answer, or a configured target the policy denied. */
export const probeError = z.enum([...DIAGNOSIS_CODES, "E_FORBIDDEN"]);

/** What the API said, as captive_portal_check reports it. */
export const capportResult = z.object({
  url: z.string().describe("the CAPPORT API URL asked"),
  captive: z.boolean().nullable().describe("the API's answer; null if it could not be asked"),
  user_portal_url: z.string().optional().describe("where to log in (RFC 8908 user-portal-url)"),
  venue_info_url: z.string().optional().describe("venue information page"),
  seconds_remaining: z.number().int().optional().describe("session time left, seconds"),
  bytes_remaining: z.number().int().optional().describe("session data left, bytes"),
  can_extend_session: z.boolean().optional().describe("the session can be extended"),
  error: probeError.optional().describe("why the API gave no answer"),
  detail: z.string().optional().describe("what went wrong asking it"),
});

export type CapportInfo = z.output<typeof capportResult>;

const cleanUrl = (v: unknown) => (typeof v === "string" ? shownUrl(v) : undefined);
const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.floor(v) : undefined);

/** Throws E_FORBIDDEN when the policy denies the API URL itself; every other problem is a detail. */
export async function fetchCapport(
  policy: OutboundPolicy,
  url: string,
  options: { signal: AbortSignal; timeoutMs: number },
): Promise<CapportInfo> {
  const shown = maskUrl(url);
  if (!url.startsWith("https://")) {
    return { url: shown, captive: null, detail: "not asked: RFC 8908 requires an https:// API URL" };
  }
  const r = await httpProbe(policy, url, {
    ...options,
    headers: { accept: CAPPORT_MEDIA_TYPE },
    deniedRedirect: "stop",
  });
  if (r.failure) return { url: shown, captive: null, error: r.failure.code, detail: r.failure.detail };
  const final = r.final;
  if (!final || r.stopped) return { url: shown, captive: null, detail: r.stopped?.detail ?? "no answer" };
  if (final.tls && !final.tls.authorized) {
    return {
      url: shown,
      captive: null,
      detail: `certificate not trusted (${final.tls.authorizationError}): answer ignored`,
    };
  }
  if (final.status !== 200) return { url: shown, captive: null, detail: `API answered ${final.status}, not 200` };
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(final.body) as Record<string, unknown>;
  } catch {
    return { url: shown, captive: null, detail: "API answer is not JSON" };
  }
  if (typeof json?.captive !== "boolean")
    return { url: shown, captive: null, detail: "API answer has no boolean `captive`" };
  const info: CapportInfo = { url: shown, captive: json.captive };
  const portal = cleanUrl(json["user-portal-url"]);
  const venue = cleanUrl(json["venue-info-url"]);
  const seconds = num(json["seconds-remaining"]);
  const bytes = num(json["bytes-remaining"]);
  if (portal) info.user_portal_url = portal;
  if (venue) info.venue_info_url = venue;
  if (seconds !== undefined) info.seconds_remaining = seconds;
  if (bytes !== undefined) info.bytes_remaining = bytes;
  if (typeof json["can-extend-session"] === "boolean") info.can_extend_session = json["can-extend-session"];
  return info;
}
