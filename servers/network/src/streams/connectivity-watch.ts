/**
 * connectivity_watch: every interval, probe the gateway (route table), DNS and HTTP in parallel and emit one
 * message per round, for a bounded duration. Calls the tools themselves through the kernel (ctx.call), so a
 * round is exactly what three separate calls would say, typed by the tools' own result schemas.
 */
import { DEFAULT_TIMEOUT_MS, hostnameField, httpUrlField, ipField } from "@roadnerd/conventions";
import { z } from "zod";
import { DEFAULT_TEST_URL } from "../captive-config.ts";
import { defineStream } from "../kit.ts";
import { dnsResolve } from "../tools/dns-resolve.ts";
import { httpCheck } from "../tools/http-check.ts";
import { routeInfo } from "../tools/route-info.ts";

const probe = z.object({
  ok: z.boolean().describe("the probe passed"),
  detail: z.string().describe("one line: what was seen"),
  ms: z.number().describe("probe duration"),
});

type Probe = z.infer<typeof probe>;

const DEFAULT_INTERVAL_MS = 2000;
const DEFAULT_URL = `${DEFAULT_TEST_URL}/`;

const VERDICTS = ["ok", "no_gateway", "dns", "http", "unknown"] as const;

async function timed<R>(fn: () => Promise<R>, judge: (r: R) => Omit<Probe, "ms">): Promise<Probe> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  try {
    return { ...judge(await fn()), ms: ms() };
  } catch (err) {
    const e = err as { code?: string; message?: string };
    return { ok: false, detail: `${e.code ?? "E_INTERNAL"}: ${e.message ?? "failed"}`, ms: ms() };
  }
}

export const connectivityWatch = defineStream({
  name: "connectivity_watch",
  summary: "Watch gateway, DNS and HTTP each interval; one message per round.",
  input: {
    interval_ms: z
      .number()
      .int()
      .min(500)
      .max(60_000)
      .optional()
      .describe(`ms between rounds (default ${DEFAULT_INTERVAL_MS})`),
    qname: hostnameField.optional().describe("name to resolve each round (default example.com)"),
    dns_server: ipField.optional().describe("resolver to ask (default: the system's)"),
    url: httpUrlField.optional().describe(`URL to fetch each round (default ${DEFAULT_URL})`),
  },
  message: {
    round: z.number().int().describe("1, 2, 3…"),
    gateway: probe,
    dns: probe,
    http: probe,
    verdict: z.enum(VERDICTS).describe("first layer that failed"),
  },
  example: { interval_ms: DEFAULT_INTERVAL_MS, qname: "example.com", url: DEFAULT_URL },
  openWorld: true,
  targets: { url: "url", dns_server: "ip" },
  summarize: (m) => {
    if (m.verdict === "ok") return "gateway, DNS and HTTP all fine";
    const failing = m.verdict === "no_gateway" ? m.gateway : m.verdict === "dns" ? m.dns : m.http;
    return `${m.verdict === "no_gateway" ? "gateway" : m.verdict} failing: ${failing.detail}`;
  },
  async run(input, ctx) {
    const interval = input.interval_ms ?? DEFAULT_INTERVAL_MS;
    const timeout_ms = Math.min(interval, DEFAULT_TIMEOUT_MS);
    const qname = input.qname ?? "example.com";
    const server = input.dns_server;
    const url = input.url ?? DEFAULT_URL;
    // Bounded: the stream's duration ends it; the cap on rounds is a second guard.
    for (let round = 1; round <= 10_000; round++) {
      const [gateway, dns, http] = await Promise.all([
        timed(
          () => ctx.call(routeInfo, { limit: 1, timeout_ms }),
          (r) => {
            const gw = r.default_gateway;
            return gw
              ? { ok: true, detail: `default via ${gw.via ?? "link"} dev ${gw.dev}` }
              : { ok: false, detail: "no default route" };
          },
        ),
        timed(
          () => ctx.call(dnsResolve, { qname, timeout_ms, ...(server ? { server } : {}) }),
          (r) => ({ ok: !r.error && r.answers.length > 0, detail: r.summary }),
        ),
        timed(
          () => ctx.call(httpCheck, { url, method: "HEAD", timeout_ms }),
          (r) => ({ ok: !r.error && typeof r.status === "number" && r.status < 500, detail: r.summary }),
        ),
      ]);
      if (ctx.signal.aborted) return;
      const verdict = !gateway.ok ? "no_gateway" : !dns.ok ? "dns" : !http.ok ? "http" : "ok";
      if (!(await ctx.emit({ round, gateway, dns, http, verdict }))) return;
      if (!(await ctx.sleep(interval))) return;
    }
  },
});
