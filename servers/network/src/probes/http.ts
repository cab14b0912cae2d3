/**
 * The http prober (blackbox's prober/http.go): one GET or HEAD through the kernel's checked, pinned HTTP probe,
 * redirects followed hop by hop, and the series blackbox users graph: status, redirects, TLS, content length,
 * per-phase durations summed over the hops. Success: an accepted status (2xx by default), a trusted certificate
 * over https unless the module skips verification, and the SSL rules of the module.
 */
import { defineProber, httpProbe, isRedirectStatus, type ProbeSeries } from "@roadnerd/conventions";
import { z } from "zod";
import { dnsLookup, ipProtocol, seconds, tlsOk, tlsSeries } from "./series.ts";

const options = z.strictObject({
  valid_status_codes: z.array(z.number().int().min(100).max(599)).max(50).default([]),
  method: z.enum(["GET", "HEAD"]).default("GET"),
  headers: z.record(z.string(), z.string().max(1024)).default({}),
  no_follow_redirects: z.boolean().default(false),
  fail_if_ssl: z.boolean().default(false),
  fail_if_not_ssl: z.boolean().default(false),
  tls_config: z.strictObject({ insecure_skip_verify: z.boolean().default(false) }).default({
    insecure_skip_verify: false,
  }),
});

/** A bare host (as blackbox accepts) is probed over plain HTTP. */
const urlOf = (target: string) => (/^https?:\/\//i.test(target) ? target : `http://${target}`);

const PHASES = ["resolve", "connect", "tls", "processing", "transfer"] as const;

export const httpProber = defineProber({
  name: "http",
  options,
  defaults: { http_2xx: {} },
  async run(target, o, ctx) {
    const result = await httpProbe(ctx.outbound, urlOf(target), {
      method: o.method,
      headers: o.headers,
      followRedirects: !o.no_follow_redirects,
      signal: ctx.signal,
      timeoutMs: ctx.remaining(),
    });
    const timings = [...result.hops.map((h) => h.timing), ...(result.failure ? [result.failure.timing] : [])];
    const phase: Record<(typeof PHASES)[number], number> = {
      resolve: 0,
      connect: 0,
      tls: 0,
      processing: 0,
      transfer: 0,
    };
    for (const t of timings) {
      phase.resolve += t.dns;
      phase.connect += t.connect;
      phase.tls += t.tls;
      phase.processing += t.ttfb;
      phase.transfer += Math.max(0, t.total - t.dns - t.connect - t.tls - t.ttfb);
    }
    const final = result.final;
    const ssl = final?.url.startsWith("https:") === true;
    const tls = final?.tls ?? result.failure?.tls ?? null;
    const status = final?.status ?? 0;
    const accepted = o.valid_status_codes.length
      ? o.valid_status_codes.includes(status)
      : status >= 200 && status < 300;
    const length = Number(final?.headers["content-length"] ?? -1);
    const success =
      result.failure === null &&
      result.stopped === null &&
      accepted &&
      tlsOk(ssl ? tls : null, o.tls_config.insecure_skip_verify) &&
      !(o.fail_if_ssl && ssl) &&
      !(o.fail_if_not_ssl && !ssl);
    const series: ProbeSeries[] = [
      ...PHASES.map((p) => ({
        name: "probe_http_duration_seconds",
        help: "Duration of http request by phase, summed over all redirects",
        value: seconds(phase[p]),
        labels: { phase: p },
      })),
      { name: "probe_http_status_code", help: "Response HTTP status code", value: status },
      {
        name: "probe_http_redirects",
        help: "The number of redirects",
        value: result.hops.filter((h) => isRedirectStatus(h.status)).length,
      },
      { name: "probe_http_ssl", help: "Indicates if SSL was used for the final redirect", value: ssl ? 1 : 0 },
      {
        name: "probe_http_content_length",
        help: "Length of http content response",
        value: Number.isFinite(length) ? length : -1,
      },
      {
        name: "probe_http_version",
        help: "Returns the version of HTTP of the probe response",
        value: final ? (tls?.alpn === "h2" ? 2 : 1.1) : 0,
      },
      dnsLookup(timings[0]?.dns ?? 0),
      ipProtocol(final?.address ?? result.hops[0]?.address),
      ...tlsSeries(ssl ? tls : null),
    ];
    if (result.failure) {
      series.push({
        name: "roadnerd_probe_failed",
        help: "Where the probe failed (1), by phase and diagnosis code",
        value: 1,
        labels: { phase: result.failure.phase, code: result.failure.code },
      });
    }
    return { success, series };
  },
});
