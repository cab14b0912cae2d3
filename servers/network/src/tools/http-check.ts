/**
 * http_check: fetch a URL the way a diagnosis needs it — status, redirect hops, timings per phase, TLS
 * facts (reported even when the certificate is bad), masked headers. Every hop goes through the kernel's
 * checked, pinned probe; a refused port, a dead name or a deadline is a 200 with `error` set.
 */
import {
  DIAGNOSIS_CODES,
  DiagError,
  type HopResponse,
  httpProbe,
  httpUrlField,
  isRedirectStatus,
  limitInput,
  oneLine,
  probeAnswer,
  shownUrl,
  type TlsFacts,
  timingMsField,
  truncationFields,
} from "@roadnerd/conventions";
import { z } from "zod";
import { defineTool } from "../kit.ts";

export const MAX_REQUEST_HEADERS = 20;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
/** Headers that belong to the connection, not the request: the probe owns them. */
const RESERVED = new Set([
  "host",
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "content-length",
  "expect",
  "http2-settings",
]);

const headersInput = z
  .record(z.string(), z.string().max(1024))
  .superRefine((headers, ctx) => {
    const names = Object.keys(headers);
    if (names.length > MAX_REQUEST_HEADERS)
      ctx.addIssue({ code: "custom", message: `at most ${MAX_REQUEST_HEADERS} headers` });
    for (const name of names) {
      if (!TOKEN.test(name)) ctx.addIssue({ code: "custom", message: `not a header name: ${name.slice(0, 40)}` });
      else if (RESERVED.has(name.toLowerCase()) || name.startsWith(":")) {
        ctx.addIssue({ code: "custom", message: `header ${name} is set by the probe itself and cannot be overridden` });
      }
      // HTTP field values are Latin-1 at most; undici would refuse others after we had blamed the target.
      if (!/^[\t\x20-\x7e\x80-\xff]*$/.test(headers[name] ?? ""))
        ctx.addIssue({ code: "custom", message: `header ${name}: only printable Latin-1 characters` });
    }
  })
  .describe(
    `extra request headers, e.g. {"accept-language":"en"} (max ${MAX_REQUEST_HEADERS}; not Host or hop-by-hop)`,
  );

const tlsShape = z.object({
  alpn: z.string().nullable().describe("negotiated protocol: h2, http/1.1 or null"),
  cert_expiry_days: z.number().int().nullable().describe("days until the certificate expires; negative = expired"),
  hostname_ok: z.boolean().describe("the certificate names this host"),
  authorized: z.boolean().describe("trusted chain and matching name, as a browser requires"),
  authorization_error: z.string().nullable().describe("why not authorized, e.g. CERT_HAS_EXPIRED"),
  issuer: z.string().nullable().describe("certificate issuer (organisation or CN)"),
});

function tlsOut(t: TlsFacts): z.input<typeof tlsShape> {
  return {
    alpn: t.alpn,
    cert_expiry_days: t.certExpiryDays,
    hostname_ok: t.hostnameOk,
    authorized: t.authorized,
    authorization_error: t.authorizationError,
    issuer: t.issuer,
  };
}

function redirectOf(hop: HopResponse): { status: number; location: string } {
  return { status: hop.status, location: shownUrl(hop.redirectUrl ?? hop.location ?? "") };
}

export const httpCheck = defineTool({
  name: "http_check",
  summary: "Fetch a URL: status, redirects, timings, TLS; failures diagnosed.",
  openWorld: true,
  targets: { url: "url" },
  input: {
    url: httpUrlField.describe("http:// or https:// URL to fetch"),
    method: z.string().min(1).max(16).optional().describe("GET (default) or HEAD; anything else is E_UNSUPPORTED"),
    headers: headersInput.optional(),
    follow: z.boolean().optional().describe("follow redirects, at most 5, each hop checked (default true)"),
    limit: limitInput,
  },
  output: {
    url: z.string().describe("the URL asked for (secrets masked)"),
    status: z.number().int().nullable().describe("last HTTP status, null if no response"),
    redirects: z
      .array(
        z.object({
          status: z.number().int().describe("3xx status"),
          location: z.string().describe("where it pointed"),
        }),
      )
      .describe("redirect hops in order"),
    final_url: z.string().optional().describe("URL of the last response, when redirected"),
    headers: z.record(z.string(), z.string()).describe("last response headers, secrets masked"),
    ...truncationFields,
    timing_ms: timingMsField.describe("phases of the last hop; total covers all hops"),
    tls: tlsShape.optional().describe("TLS facts of the last hop (https only)"),
    error: z.enum(DIAGNOSIS_CODES).optional().describe("diagnosis when no answer"),
    detail: z.string().optional().describe("what failed, where, or why redirects stopped"),
  },
  example: { url: "https://example.com/" },
  view: (r) => ({
    status: r.status,
    final_url: r.final_url,
    redirects: r.redirects.length,
    error: r.error,
    detail: r.detail,
    total_ms: r.timing_ms.total,
  }),
  summarize: (r) => {
    const head = `${r.url} →`;
    if (r.error) return `${head} ${r.error}: ${r.detail ?? ""}`;
    // A final 3xx was not followed (follow: false, or the hop limit): say where it points instead.
    const stopped = r.status !== null && r.status >= 300 && r.status < 400;
    const followed = stopped ? r.redirects.length - 1 : r.redirects.length;
    const via =
      (followed > 0 ? ` after ${followed} redirect(s)` : "") +
      (stopped ? ` (redirect not followed: ${r.redirects.at(-1)?.location ?? "?"})` : "");
    const tls = r.tls
      ? `; TLS ${r.tls.alpn ?? "-"}, cert ${r.tls.authorized ? "ok" : `NOT trusted (${r.tls.authorization_error})`}, expires in ${r.tls.cert_expiry_days} d`
      : "";
    return `${head} ${r.status}${via} in ${r.timing_ms.total} ms${tls}`;
  },
  async handler(input, ctx) {
    const method = (input.method ?? "GET").toUpperCase();
    if (method !== "GET" && method !== "HEAD") {
      throw new DiagError("E_UNSUPPORTED", `http_check is read-only: method ${oneLine(method, 16)} is not allowed`, {
        hint: 'use "GET" or "HEAD"',
      });
    }
    const result = await httpProbe(ctx.outbound, input.url, {
      method,
      headers: input.headers ?? {},
      followRedirects: input.follow ?? true,
      signal: ctx.signal,
      timeoutMs: ctx.budget(),
    });
    const lastTls = result.failure ? result.failure.tls : result.final?.tls;
    const redirects = result.hops.filter((h) => isRedirectStatus(h.status) && h.location !== null).map(redirectOf);
    const { url, status, final_url, error, detail, ...rest } = probeAnswer(result, input.url, input.limit);
    return {
      url,
      status,
      redirects,
      ...(final_url ? { final_url } : {}),
      ...rest,
      ...(lastTls ? { tls: tlsOut(lastTls) } : {}),
      ...(error ? { error } : {}),
      ...(detail ? { detail } : {}),
    };
  },
});
