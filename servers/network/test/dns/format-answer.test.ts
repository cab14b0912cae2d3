import dnsPacket, { type Answer } from "dns-packet";
import { describe, expect, it } from "vitest";
import { escapeBytes, formatAnswers } from "../../src/dns/format-answer.ts";

/** Records as they come off the wire: encoded, then decoded by the same library the tool uses. */
function wire(answers: Answer[]): Answer[] {
  const buf = dnsPacket.encode({ type: "response", id: 1, questions: [{ type: "A", name: "q.test" }], answers });
  return dnsPacket.decode(buf).answers ?? [];
}

describe("formatAnswers", () => {
  it("formats every supported type with its TTL", () => {
    const rows = formatAnswers(
      wire([
        { name: "www.example.test", type: "CNAME", ttl: 300, data: "host.example.test." },
        { name: "host.example.test", type: "A", ttl: 60, data: "192.0.2.10" },
        { name: "host.example.test", type: "AAAA", ttl: 61, data: "2001:0db8:0000::0010" },
        { name: "example.test", type: "MX", ttl: 3600, data: { preference: 10, exchange: "mail.example.test" } },
        { name: "example.test", type: "TXT", ttl: 120, data: ["v=spf1 ", "-all"] },
        { name: "example.test", type: "NS", ttl: 86400, data: "ns1.example.test" },
        { name: "10.2.0.192.in-addr.arpa", type: "PTR", ttl: 900, data: "host.example.test" },
      ]),
    );
    expect(rows).toEqual([
      { name: "www.example.test", type: "CNAME", ttl: 300, data: "host.example.test" },
      { name: "host.example.test", type: "A", ttl: 60, data: "192.0.2.10" },
      { name: "host.example.test", type: "AAAA", ttl: 61, data: "2001:db8::10" },
      { name: "example.test", type: "MX", ttl: 3600, data: "10 mail.example.test" },
      { name: "example.test", type: "TXT", ttl: 120, data: "v=spf1 -all" },
      { name: "example.test", type: "NS", ttl: 86400, data: "ns1.example.test" },
      { name: "10.2.0.192.in-addr.arpa", type: "PTR", ttl: 900, data: "host.example.test" },
    ]);
  });

  it("escapes bytes that are not printable ASCII, as dig does", () => {
    expect(escapeBytes(Buffer.from([0x61, 0x0a, 0x22, 0xff]))).toBe('a\\010"\\255');
    const [row] = formatAnswers(wire([{ name: "t.test", type: "TXT", ttl: 5, data: Buffer.from("a\u0007b") }]));
    expect(row?.data).toBe("a\\007b");
  });

  it("cuts long TXT values to the text limit", () => {
    const long = "x".repeat(255);
    const [row] = formatAnswers(wire([{ name: "t.test", type: "TXT", ttl: 5, data: [long, long] }]), 100);
    expect(row?.data).toHaveLength(100);
    expect(row?.data.endsWith("…")).toBe(true);
  });

  it("drops the EDNS OPT pseudo-record", () => {
    const opt = { name: ".", type: "OPT", udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 0, flags: 0 } as Answer;
    expect(formatAnswers([opt])).toEqual([]);
  });
});
