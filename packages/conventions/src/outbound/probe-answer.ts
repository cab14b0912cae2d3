/**
 * The part of an HTTP probe's answer every HTTP tool shows the same way: the URL and where it ended up (masked),
 * the last status, its headers (masked, capped, each cut), per-phase timings of the last hop, and the failure
 * or the stop as `error` / `detail`. Tools spread it and add their own fields (redirects, TLS, Location).
 */
import { type Capped, capList, cutText } from "../define/limits.ts";
import type { DiagnosisCode } from "../errors/socket-errors.ts";
import { maskHeaders, maskUrl, shownUrl } from "../runtime/mask.ts";
import type { HopTiming, HttpProbeResult } from "./http-probe.ts";
import type { PhaseTiming } from "./timing.ts";

export interface ProbeAnswer {
  url: string;
  status: number | null;
  final_url?: string;
  headers: Record<string, string>;
  truncated: boolean;
  omitted: number;
  timing_ms: PhaseTiming;
  error?: DiagnosisCode;
  detail?: string;
}

export function probeAnswer(result: HttpProbeResult, askedUrl: string, limit: number | undefined): ProbeAnswer {
  const last = result.final;
  const timing: HopTiming | undefined = result.failure?.timing ?? last?.timing;
  const { items, omitted }: Capped<[string, string]> = capList(Object.entries(maskHeaders(last?.headers ?? {})), limit);
  return {
    url: maskUrl(askedUrl),
    status: last?.status ?? null,
    ...(result.finalUrl !== new URL(askedUrl).href ? { final_url: maskUrl(result.finalUrl) } : {}),
    headers: Object.fromEntries(items.map(([k, v]) => [k, cutText(v, 300)])),
    truncated: omitted > 0,
    omitted,
    timing_ms: {
      dns: timing?.dns ?? 0,
      connect: timing?.connect ?? 0,
      tls: timing?.tls ?? 0,
      ttfb: timing?.ttfb ?? 0,
      total: result.totalMs,
    },
    ...(result.failure ? { error: result.failure.code, detail: result.failure.detail } : {}),
    ...(result.stopped ? { detail: `${result.stopped.detail}: ${shownUrl(result.stopped.url, 200)}` } : {}),
  };
}
