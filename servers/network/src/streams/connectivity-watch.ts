/**
 * connectivity_watch: every interval, probe the gateway (route table), DNS and HTTP in parallel and emit one
 * message per round, for a bounded duration. Reuses the tools themselves through runTool, so a round is
 * exactly what three separate calls would say.
 */
import { defineStream, hostnameField, httpUrlField, ipField, runTool, type ToolResult } from "@roadnerd/conventions";
import { z } from "zod";
import { dnsResolve } from "../tools/dns-resolve.ts";
import { httpCheck } from "../tools/http-check.ts";
import { routeInfo } from "../tools/route-info.ts";

const probe = z.object({
  ok: z.boolean().describe("the probe passed"),
  detail: z.string().describe("one line: what was seen"),
  ms: z.number().describe("probe duration"),
});

export const connectivityRound = z.object({
  round: z.number().int().describe("1, 2, 3…"),
  gateway: probe,
  dns: probe,
  http: probe,
  verdict: z.enum(["ok", "no_gateway", "dns", "http", "unknown"]).describe("first layer that failed"),
  summary: z.string().describe("one line for the user"),
});

type Probe = z.infer<typeof probe>;

async function timed(fn: () => Promise<ToolResult>, judge: (r: ToolResult) => Omit<Probe, "ms">): Promise<Probe> {
  const started = performance.now();
  try {
    const r = await fn();
    return { ...judge(r), ms: Math.round(performance.now() - started) };
  } catch (err) {
    const e = err as { code?: string; message?: string };
    return {
      ok: false,
      detail: `${e.code ?? "E_INTERNAL"}: ${e.message ?? "failed"}`,
      ms: Math.round(performance.now() - started),
    };
  }
}

export const connectivityWatch = defineStream({
  name: "connectivity_watch",
  summary: "Watch gateway, DNS and HTTP each interval; one message per round.",
  input: {
    interval_ms: z.number().int().min(500).max(60_000).optional().describe("ms between rounds (default 2000)"),
    qname: hostnameField.optional().describe("name to resolve each round (default example.com)"),
    dns_server: ipField.optional().describe("resolver to ask (default: the system's)"),
    url: httpUrlField.optional().describe("URL to fetch each round (default http://neverssl.com/)"),
  },
  message: connectivityRound,
  example: { interval_ms: 2000, qname: "example.com", url: "http://neverssl.com/" },
  openWorld: true,
  async run(input, ctx) {
    const interval = input.interval_ms ?? 2000;
    const timeout_ms = Math.min(interval, 2000);
    const call = (tool: Parameters<typeof runTool>[0], args: Record<string, unknown>) =>
      runTool(tool, { ...args, timeout_ms }, ctx, { signal: ctx.signal });
    // Bounded: the stream's duration ends it; the cap on rounds is a second guard.
    for (let round = 1; round <= 10_000; round++) {
      const [gateway, dns, http] = await Promise.all([
        timed(
          () => call(routeInfo, { limit: 1 }),
          (r) => {
            const gw = r.default_gateway as { via: string | null; dev: string } | null;
            return gw
              ? { ok: true, detail: `default via ${gw.via ?? "link"} dev ${gw.dev}` }
              : { ok: false, detail: "no default route" };
          },
        ),
        timed(
          () =>
            call(dnsResolve, {
              qname: input.qname ?? "example.com",
              ...(input.dns_server ? { server: input.dns_server } : {}),
            }),
          (r) => ({ ok: !r.error && Array.isArray(r.answers) && r.answers.length > 0, detail: String(r.summary) }),
        ),
        timed(
          () => call(httpCheck, { url: input.url ?? "http://neverssl.com/", method: "HEAD" }),
          (r) => ({ ok: !r.error && typeof r.status === "number" && r.status < 500, detail: String(r.summary) }),
        ),
      ]);
      if (ctx.signal.aborted) return;
      const verdict = !gateway.ok ? "no_gateway" : !dns.ok ? "dns" : !http.ok ? "http" : "ok";
      const summary =
        verdict === "ok"
          ? "gateway, DNS and HTTP all fine"
          : `${verdict === "no_gateway" ? "gateway" : verdict} failing: ${verdict === "no_gateway" ? gateway.detail : verdict === "dns" ? dns.detail : http.detail}`;
      if (!(await ctx.emit({ round, gateway, dns, http, verdict, summary: summary.slice(0, 160) }))) return;
      if (!(await ctx.sleep(interval))) return;
    }
  },
});
