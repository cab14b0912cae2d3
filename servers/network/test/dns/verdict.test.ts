import { describe, expect, it } from "vitest";
import type { AnswerRow } from "../../src/dns/format-answer.ts";
import type { DnsReply, QueryOutcome } from "../../src/dns/query.ts";
import type { DnsResult } from "../../src/dns/result-shape.ts";
import { diagnose, summarizeDns } from "../../src/dns/verdict.ts";

const reply = (rcode: string): QueryOutcome => ({
  ok: true,
  reply: { rcode, id: 1, flag_qr: true } as unknown as DnsReply,
  transport: "udp",
  ms: 3,
});
const a: AnswerRow = { name: "host.example.test", type: "A", ttl: 60, data: "192.0.2.10" };
const cname: AnswerRow = { name: "www.example.test", type: "CNAME", ttl: 300, data: "host.example.test" };

describe("diagnose", () => {
  it("is silent for a plain answer", () => {
    expect(diagnose(reply("NOERROR"), "A", [cname, a])).toEqual({});
  });

  it("says NODATA without an error when NOERROR has nothing of the type asked", () => {
    expect(diagnose(reply("NOERROR"), "A", [])).toEqual({ detail: "NODATA" });
    expect(diagnose(reply("NOERROR"), "A", [cname])).toEqual({ detail: "NODATA" });
  });

  it("tells rcodes and transport failures apart", () => {
    expect(diagnose(reply("NXDOMAIN"), "A", [])).toEqual({ error: "E_DNS_FAIL", detail: "NXDOMAIN" });
    expect(diagnose(reply("SERVFAIL"), "A", [])).toEqual({ error: "E_DNS_FAIL", detail: "SERVFAIL" });
    expect(diagnose(reply("REFUSED"), "A", [])).toEqual({ error: "E_DNS_FAIL", detail: "REFUSED" });
    expect(diagnose(reply("YXDOMAIN"), "A", [])).toEqual({ error: "E_DNS_FAIL", detail: "OTHER_RCODE" });
    const timeout: QueryOutcome = { ok: false, failure: "TIMEOUT", message: "", ms: 500 };
    expect(diagnose(timeout, "A", [])).toEqual({ error: "E_DNS_FAIL", detail: "TIMEOUT" });
  });
});

describe("summarizeDns", () => {
  const base: DnsResult = {
    qname: "www.example.test",
    type: "A",
    answers: [cname, a],
    resolver: "127.53.0.1",
    resolver_from: "input",
    rcode: "NOERROR",
    query_ms: 2,
    transport: "udp",
    truncated: false,
    omitted: 0,
  };

  it("gives the answer, the lowest TTL and the CNAME chain", () => {
    expect(summarizeDns(base)).toBe(
      "www.example.test A → 192.0.2.10 (ttl 60s) via CNAME host.example.test; resolver 127.53.0.1, 2 ms",
    );
  });

  it("names the failure and what it means", () => {
    expect(summarizeDns({ ...base, answers: [], error: "E_DNS_FAIL", detail: "NXDOMAIN", rcode: "NXDOMAIN" })).toBe(
      "www.example.test A failed: NXDOMAIN, the name does not exist (resolver 127.53.0.1, 2 ms)",
    );
    expect(summarizeDns({ ...base, answers: [], detail: "NODATA" })).toBe(
      "www.example.test A: NODATA, the name exists but has no records of this type (resolver 127.53.0.1, 2 ms)",
    );
    expect(summarizeDns({ ...base, answers: [], error: "E_DNS_FAIL", detail: "OTHER_RCODE", rcode: "YXDOMAIN" })).toBe(
      "www.example.test A failed: YXDOMAIN, the resolver answered with an error code (resolver 127.53.0.1, 2 ms)",
    );
  });

  it("says when resolv.conf named no resolver", () => {
    const r: DnsResult = { ...base, resolver: "127.0.0.1", resolver_from: "fallback" };
    expect(summarizeDns(r)).toContain("resolver 127.0.0.1 (resolv.conf lists none)");
  });
});
