/**
 * The dns prober (blackbox's prober/dns.go): the target is the DNS server (`ip` or `ip:port`, or a name the
 * policy resolves first), the module names the question. The query goes on the wire as dns_resolve's does
 * (UDP, TCP on truncation), to an address the outbound policy checked. Success: an answer whose rcode the
 * module accepts (NOERROR by default).
 */
import { isIP } from "node:net";
import { defineProber, type ProbeSeries } from "@roadnerd/conventions";
import { z } from "zod";
import { DNS_PORT, queryDns } from "../dns/query.ts";
import { RECORD_TYPES } from "../dns/result-shape.ts";
import { dnsLookup, ipProtocol, seconds } from "./series.ts";

const options = z.strictObject({
  query_name: z.string().min(1).max(253).default("example.com"),
  query_type: z.enum(RECORD_TYPES).default("A"),
  valid_rcodes: z.array(z.string().min(1).max(16)).min(1).default(["NOERROR"]),
});

/** "1.2.3.4", "1.2.3.4:5353", "[::1]:53", "::1" or a name, with blackbox's optional scheme stripped. */
function serverOf(target: string): { host: string; port: number } {
  const bare = target.replace(/^(udp|tcp|dns):\/\//i, "");
  if (isIP(bare)) return { host: bare, port: DNS_PORT };
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(bare);
  return { host: (m?.[1] ?? bare).replace(/^\[|\]$/g, ""), port: m?.[2] ? Number(m[2]) : DNS_PORT };
}

export const dnsProber = defineProber({
  name: "dns",
  options,
  defaults: { dns: {} },
  async run(target, o, ctx) {
    const { host, port } = serverOf(target);
    const resolved = await ctx.outbound.resolveTarget(host, ctx.signal, port);
    const outcome = await queryDns({
      name: o.query_name,
      type: o.query_type,
      server: resolved.address,
      port,
      policy: ctx.outbound,
      timeoutMs: ctx.remaining(),
      signal: ctx.signal,
    });
    const reply = outcome.ok ? outcome.reply : undefined;
    const rcode = reply?.rcode ?? (reply ? "NOERROR" : undefined);
    const phase = (name: string, ms: number): ProbeSeries => ({
      name: "probe_dns_duration_seconds",
      help: "Duration of DNS request by phase",
      value: seconds(ms),
      labels: { phase: name },
    });
    const count = (name: string, help: string, n: number | undefined): ProbeSeries => ({ name, help, value: n ?? 0 });
    const series: ProbeSeries[] = [
      dnsLookup(resolved.dnsMs),
      ipProtocol(resolved.address),
      phase("resolve", resolved.dnsMs),
      phase("connect", 0),
      phase("request", outcome.ms),
      count(
        "probe_dns_answer_rrs",
        "Returns number of entries in the answer resource record list",
        reply?.answers?.length,
      ),
      count(
        "probe_dns_authority_rrs",
        "Returns number of entries in the authority resource record list",
        reply?.authorities?.length,
      ),
      count(
        "probe_dns_additional_rrs",
        "Returns number of entries in the additional resource record list",
        reply?.additionals?.length,
      ),
      {
        name: "probe_dns_query_succeeded",
        help: "Displays whether or not the query was executed successfully",
        value: outcome.ok ? 1 : 0,
      },
    ];
    if (!outcome.ok) {
      series.push({
        name: "roadnerd_probe_failed",
        help: "Where the probe failed (1), by phase and diagnosis code",
        value: 1,
        labels: { phase: "request", code: outcome.failure },
      });
    }
    return { success: rcode !== undefined && o.valid_rcodes.includes(rcode), series };
  },
});
