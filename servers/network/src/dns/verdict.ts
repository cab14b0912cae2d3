/** From a query outcome to dns_resolve's verdict (error + detail) and the one line a small model repeats. */
import type { AnswerRow } from "./format-answer.ts";
import type { QueryOutcome } from "./query.ts";
import type { DnsResult } from "./result-shape.ts";

export const DETAILS = [
  "NXDOMAIN",
  "SERVFAIL",
  "REFUSED",
  "FORMERR",
  "NOTIMP",
  "OTHER_RCODE",
  "TIMEOUT",
  "UNREACHABLE",
  "BAD_REPLY",
  "TCP_FAILED",
  "NODATA",
] as const;

export type Detail = (typeof DETAILS)[number];

/** What each detail means, in words a user understands. */
const MEANING: Record<Detail, string> = {
  NXDOMAIN: "the name does not exist",
  SERVFAIL: "the resolver could not get an answer upstream",
  REFUSED: "the resolver refused to answer",
  FORMERR: "the resolver rejected the query as malformed",
  NOTIMP: "the resolver does not support this query",
  OTHER_RCODE: "the resolver answered with an error code",
  TIMEOUT: "no answer before the deadline",
  UNREACHABLE: "nothing answers DNS there (port closed or no route)",
  BAD_REPLY: "only garbled replies came back",
  TCP_FAILED: "the answer was too big for UDP and TCP failed",
  NODATA: "the name exists but has no records of this type",
};

export interface Verdict {
  detail?: Detail;
  error?: "E_DNS_FAIL";
}

/** NODATA (NOERROR with nothing of the asked type) is an answer, not a failure: only `detail` says so. */
export function diagnose(outcome: QueryOutcome, type: string, rows: readonly AnswerRow[]): Verdict {
  if (!outcome.ok) return { error: "E_DNS_FAIL", detail: outcome.failure };
  const rcode = outcome.reply.rcode ?? "NOERROR";
  if (rcode === "NOERROR") return rows.some((r) => r.type === type) ? {} : { detail: "NODATA" };
  const known = (DETAILS as readonly string[]).includes(rcode) ? (rcode as Detail) : "OTHER_RCODE";
  return { error: "E_DNS_FAIL", detail: known };
}

export function summarizeDns(r: DnsResult): string {
  const at = `resolver ${r.resolver}${r.resolver_from === "fallback" ? " (resolv.conf lists none)" : ""}`;
  const ms = r.query_ms === undefined ? "" : `, ${r.query_ms} ms`;
  if (r.error || r.detail) {
    const code = r.detail === "OTHER_RCODE" ? (r.rcode ?? r.detail) : r.detail;
    const head = r.error ? `${r.qname} ${r.type} failed: ${code}` : `${r.qname} ${r.type}: ${code}`;
    return `${head}, ${MEANING[r.detail ?? "OTHER_RCODE"]} (${at}${ms})`;
  }
  const hits = r.answers.filter((a) => a.type === r.type);
  if (!hits.length) return `${r.qname} ${r.type}: answers cut by limit (${r.omitted} omitted); ${at}${ms}`;
  const shown = hits.slice(0, 3).map((a) => a.data);
  const more = hits.length > shown.length || r.omitted > 0 ? " …" : "";
  const ttl = Math.min(...hits.map((a) => a.ttl));
  const chain = r.answers.filter((a) => a.type === "CNAME" && r.type !== "CNAME").map((a) => a.data);
  const via = chain.length ? ` via CNAME ${chain.join(" → ")}` : "";
  const tcp = r.transport === "tcp" ? " over tcp" : "";
  return `${r.qname} ${r.type} → ${shown.join(", ")}${more} (ttl ${ttl}s)${via}; ${at}${tcp}${ms}`;
}
