/** dns_resolve: ask one resolver one question over the wire and report real TTLs, rcodes and timeouts. */
import { capList, DiagError, hostField, ipField, limitInput, type ToolContext } from "@roadnerd/conventions";
import { z } from "zod";
import { formatAnswers } from "../dns/format-answer.ts";
import { ptrName } from "../dns/ptr-name.ts";
import { DNS_PORT, queryDns } from "../dns/query.ts";
import { readDefaultResolver } from "../dns/resolv-conf.ts";
import { dnsResultShape, RECORD_TYPES } from "../dns/result-shape.ts";
import { type Detail, diagnose, summarizeDns } from "../dns/verdict.ts";
import { defineTool, type NetworkConfig } from "../kit.ts";

export const dnsResolve = defineTool({
  name: "dns_resolve",
  summary: "Look up a DNS name (A, AAAA, MX, PTR…): answers, or why it failed.",
  input: {
    qname: hostField.describe("name to look up, e.g. example.com; an IP means a reverse (PTR) lookup"),
    type: z.enum(RECORD_TYPES).optional().describe("record type (default A, or PTR when qname is an IP)"),
    server: ipField.optional().describe("IP of one resolver to ask (default: first nameserver in resolv.conf)"),
    limit: limitInput,
  },
  output: dnsResultShape,
  example: { qname: "example.com", type: "A" },
  openWorld: true,
  targets: { server: "ip" },
  view: (r) => ({
    answers: r.answers.map((a) => a.data),
    resolver: r.resolver,
    error: r.error,
    detail: r.detail,
    rcode: r.rcode,
  }),
  summarize: summarizeDns,
  async handler(input, ctx) {
    const reverse = ptrName(input.qname);
    const type = input.type ?? (reverse ? "PTR" : "A");
    if (reverse && type !== "PTR") {
      throw new DiagError("E_INVALID_INPUT", `dns_resolve: qname ${input.qname} is an IP; only type PTR takes an IP`, {
        hint: `example: ${JSON.stringify({ qname: input.qname, type: "PTR" })}`,
      });
    }
    const asked = input.qname.replace(/\.$/, "");
    const name = reverse ?? asked;
    const { resolver, from } = await pickResolver(input.server, ctx);
    const outcome = await queryDns({
      name,
      type,
      server: resolver,
      // The machine's own resolver is its configuration, not a target a caller chose: reachable whatever the rules.
      policy: from === "input" ? ctx.outbound : ctx.outbound.trusting(resolver),
      timeoutMs: ctx.budget(),
      signal: ctx.signal,
    });
    if (!outcome.ok) ctx.log.debug({ failure: outcome.failure, message: outcome.message }, "dns query failed");
    const rows = outcome.ok ? formatAnswers(outcome.reply.answers ?? []) : [];
    const { items, omitted } = capList(rows, input.limit);
    const verdict: { detail?: Detail; error?: "E_DNS_FAIL" } = diagnose(outcome, type, rows);
    const next = verdict.error ? configNext(from, resolver, verdict.detail) : undefined;
    return {
      qname: input.qname,
      type,
      ...(name !== asked ? { query_name: name } : {}),
      answers: items,
      resolver,
      resolver_from: from,
      ...verdict,
      ...(outcome.ok ? { rcode: outcome.reply.rcode ?? "NOERROR", transport: outcome.transport } : {}),
      query_ms: outcome.ms,
      truncated: omitted > 0,
      omitted,
      ...(next ? { next } : {}),
    };
  },
});

/** Names a name's own answer (NXDOMAIN, NODATA) is not the resolver's fault. */
const RESOLVER_FAULTS: ReadonlySet<Detail | undefined> = new Set<Detail | undefined>([
  "SERVFAIL",
  "REFUSED",
  "TIMEOUT",
  "UNREACHABLE",
  "BAD_REPLY",
  "TCP_FAILED",
]);

/** The machine's own resolver failed: where it comes from (dns-config) is what to look at next. */
function configNext(from: "input" | "resolv_conf" | "fallback", resolver: string, detail: Detail | undefined) {
  if (from === "input" || !RESOLVER_FAULTS.has(detail)) return undefined;
  return {
    tool: "dns-config/dns_config_get",
    args: {},
    why: `the configured resolver ${resolver} failed (${detail}): see which servers are set and by whom`,
  };
}

/**
 * An explicit server is user input and passes the outbound policy. The system resolver does not: it is
 * the machine's own configuration (and may sit on a denied range, e.g. AWS's 169.254.169.253).
 */
async function pickResolver(server: string | undefined, ctx: ToolContext<NetworkConfig>) {
  if (server) {
    ctx.outbound.checkAddress(server, undefined, DNS_PORT);
    return { resolver: server, from: "input" as const };
  }
  const found = await readDefaultResolver(ctx.config.RESOLV_CONF);
  return { resolver: found.address, from: found.from };
}
