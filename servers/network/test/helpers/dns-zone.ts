/** The zone the test DNS servers serve: every record type with a distinct, known TTL. */
import type { Misbehaviour, TestRecord } from "@roadnerd/testkit";

/** Six TXT records of 120 bytes: over 512 bytes, so over UDP the answer is truncated and TCP must follow. */
export const BIG_TXT = Array.from({ length: 6 }, (_, i) => `${i}${"t".repeat(119)}`);

export const ZONE: TestRecord[] = [
  {
    name: "example.test",
    type: "SOA",
    ttl: 3600,
    data: { mname: "ns1.example.test", rname: "hostmaster.example.test", serial: 2024010101, minimum: 300 },
  },
  { name: "example.test", type: "NS", ttl: 86400, data: "ns1.example.test" },
  { name: "example.test", type: "NS", ttl: 86400, data: "ns2.example.test" },
  { name: "example.test", type: "MX", ttl: 3600, data: { preference: 10, exchange: "mail.example.test" } },
  { name: "example.test", type: "MX", ttl: 3600, data: { preference: 20, exchange: "backup.example.test" } },
  { name: "example.test", type: "TXT", ttl: 120, data: ["v=spf1 ", "ip4:192.0.2.0/24 -all"] },
  { name: "host.example.test", type: "A", ttl: 60, data: "192.0.2.10" },
  { name: "short.example.test", type: "A", ttl: 60, data: "192.0.2.10" },
  { name: "host.example.test", type: "A", ttl: 60, data: "192.0.2.11" },
  { name: "host.example.test", type: "AAAA", ttl: 90, data: "2001:db8::10" },
  { name: "www.example.test", type: "CNAME", ttl: 300, data: "web.example.test" },
  { name: "web.example.test", type: "CNAME", ttl: 120, data: "host.example.test" },
  { name: "dangling.example.test", type: "CNAME", ttl: 30, data: "gone.example.test" },
  { name: "10.2.0.192.in-addr.arpa", type: "PTR", ttl: 900, data: "host.example.test" },
  {
    name: "0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa",
    type: "PTR",
    ttl: 901,
    data: "host.example.test",
  },
  ...BIG_TXT.map((t): TestRecord => ({ name: "big.example.test", type: "TXT", ttl: 45, data: t })),
  { name: "tc.example.test", type: "A", ttl: 33, data: "192.0.2.33" },
  { name: "spoofed.example.test", type: "A", ttl: 44, data: "192.0.2.44" },
];

export const MISBEHAVE: Record<string, Misbehaviour> = {
  "servfail.example.test": "servfail",
  "refused.example.test": "refused",
  "silent.example.test": "timeout",
  "tc.example.test": "truncate",
  "spoofed.example.test": "spoof_first",
  "garbage.example.test": "garbage",
  "short.example.test": "short_rdata",
};
