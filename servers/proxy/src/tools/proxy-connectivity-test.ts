/**
 * proxy_connectivity_test: GET a URL through a proxy (the one given, or the one this process's client takes
 * from its environment) or directly, and say which phase failed — proxy connect, CONNECT, TLS, first byte —
 * with a timing for each. The proxy and the target must both be in OUTBOUND_ALLOW; the target is judged
 * before anything is sent, so a denied target is never asked for, even through a proxy.
 */
import { DIAGNOSIS_CODES, DiagError, httpUrlField, portOf, shownUrl, timingMsField } from "@roadnerd/conventions";
import { z } from "zod";
import { clientViews } from "../env/client-rules.ts";
import { noProxyMatches } from "../env/no-proxy.ts";
import { maskProxyValue, type ProxyTarget, parseProxyValue } from "../env/proxy-value.ts";
import { defineTool } from "../kit.ts";
import { proxiedRequest, REQUEST_PHASES } from "../probe/proxied-request.ts";
import { judgeProxy, judgeTarget } from "../target-policy.ts";
import { trustedContext } from "../trust.ts";

const proxyField = z
  .string()
  .max(2048)
  .refine((v) => v === "direct" || parseProxyValue(v) !== null, {
    message: 'expected a proxy address like http://proxy.example:3128 or proxy.example:3128, or "direct"',
  })
  .refine((v) => v === "direct" || ["http", "https"].includes(parseProxyValue(v)?.scheme ?? ""), {
    message: "only http:// and https:// proxies are supported",
  })
  .optional()
  .describe('proxy to use (http://[user:pass@]host:port); "direct" for none; default: this server\'s http(s)_proxy');

export const proxyConnectivityTest = defineTool({
  name: "proxy_connectivity_test",
  summary: "GET a URL through a proxy: which phase failed (connect, CONNECT, TLS, first byte).",
  input: { url: httpUrlField.describe("the URL to reach, e.g. https://intranet.example/"), proxy: proxyField },
  output: {
    url: z.string().describe("the URL asked for (masked)"),
    via_proxy: z.boolean(),
    proxy: z.string().optional().describe("the proxy used (masked)"),
    proxy_from: z.string().optional().describe('"input", or the variable it came from'),
    status: z.number().int().optional().describe("the target's HTTP status"),
    error: z
      .enum(DIAGNOSIS_CODES as [string, ...string[]])
      .optional()
      .describe("the diagnosis when it failed"),
    phase: z.enum(REQUEST_PHASES).optional().describe("the phase that failed"),
    detail: z.string().optional(),
    proxy_status: z.number().int().optional().describe("the proxy's own refusal status (407 credentials, 403…)"),
    proxy_authenticate: z.string().optional().describe("the scheme the proxy asks for (Proxy-Authenticate)"),
    tls: z
      .object({
        authorized: z.boolean(),
        authorization_error: z.string().nullable(),
        protocol: z.string().nullable(),
        cert_expiry_days: z.number().int().nullable(),
        issuer: z.string().nullable(),
      })
      .optional()
      .describe("the target's certificate as seen through the tunnel"),
    // Every phase reported, 0 when not taken (direct: no proxy_connect, no tunnel).
    timing_ms: timingMsField.required({ proxy_connect: true, tunnel: true }),
  },
  example: { url: "https://intranet.example/", proxy: "http://proxy.example:3128" },
  openWorld: true,
  targets: { url: "url" },
  view: (r) => ({
    status: r.status,
    error: r.error,
    phase: r.phase,
    proxy_status: r.proxy_status,
    proxy_authenticate: r.proxy_authenticate,
  }),
  summarize: (r) => {
    const via = r.via_proxy ? `via ${r.proxy}` : "direct";
    if (r.error) return `${r.url} ${via}: failed at ${r.phase} (${r.error}): ${r.detail ?? ""}`.trim();
    return `${r.url} ${via}: HTTP ${r.status} in ${r.timing_ms.total} ms`;
  },
  async handler(input, ctx) {
    const url = new URL(input.url);
    let proxy: ProxyTarget | null = null;
    let proxyValue: string | undefined;
    let proxyFrom: string | undefined;
    if (input.proxy !== undefined && input.proxy !== "direct") {
      proxyValue = input.proxy;
      proxyFrom = "input";
    } else if (input.proxy === undefined) {
      const node = clientViews(process.env).find((v) => v.client === "undici");
      const picked = url.protocol === "https:" ? node?.https : node?.http;
      const bypass = node?.no_proxy && noProxyMatches(node.no_proxy.value, url.hostname, portOf(url));
      if (picked && !bypass) {
        proxyValue = picked.value;
        proxyFrom = picked.from;
      }
    }
    if (proxyValue !== undefined) {
      proxy = parseProxyValue(proxyValue);
      if (!proxy || (proxy.scheme !== "http" && proxy.scheme !== "https")) {
        throw new DiagError("E_UNSUPPORTED", `${proxyFrom} is not an http(s) proxy: ${maskProxyValue(proxyValue)}`);
      }
      judgeProxy(ctx, proxy.host, proxy.port);
    }
    await judgeTarget(ctx, url, proxy !== null);
    const r = await proxiedRequest({
      target: url,
      proxy,
      policy: ctx.outbound,
      signal: ctx.signal,
      timeoutMs: ctx.budget(),
      secureContext: trustedContext(ctx.config),
    });
    const base = {
      url: shownUrl(input.url),
      via_proxy: proxy !== null,
      ...(proxyValue !== undefined ? { proxy: maskProxyValue(proxyValue), proxy_from: proxyFrom } : {}),
      ...(r.tls ? { tls: r.tls } : {}),
      timing_ms: r.timing,
    };
    if (r.ok) return { ...base, status: r.status };
    return {
      ...base,
      error: r.code,
      phase: r.phase,
      detail: r.detail,
      ...(r.proxyStatus !== undefined ? { proxy_status: r.proxyStatus } : {}),
      ...(r.proxyAuthenticate !== undefined ? { proxy_authenticate: r.proxyAuthenticate } : {}),
    };
  },
});
