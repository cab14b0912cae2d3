/**
 * One DNS question to one server, the way a stub resolver asks it: UDP with a random id and
 * retransmits, replies accepted only if id and question match, TCP when the UDP answer is truncated.
 * Bounded by `timeoutMs` and `signal`; every socket is closed before the promise settles.
 */
import { randomInt } from "node:crypto";
import { isIP } from "node:net";
import type { OutboundPolicy } from "@roadnerd/conventions";
import dnsPacket, { type DecodedPacket, type RecordType } from "dns-packet";
import { tcpExchange, udpExchange } from "./transport.ts";

export { DNS_PORT, UDP_ATTEMPTS } from "./transport.ts";

export interface QueryOptions {
  name: string;
  type: RecordType;
  server: string;
  /** Decides `server` (the kernel's dial checks it again before the socket opens). */
  policy: OutboundPolicy;
  port?: number;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** dns-packet decodes the header's rcode too; its types leave it out. */
export type DnsReply = DecodedPacket & { rcode?: string };

export type QueryFailure = "TIMEOUT" | "UNREACHABLE" | "BAD_REPLY" | "TCP_FAILED";

export type QueryOutcome =
  | { ok: true; reply: DnsReply; transport: "udp" | "tcp"; ms: number }
  | { ok: false; failure: QueryFailure; message: string; ms: number };

export type Step =
  | { kind: "reply"; reply: DnsReply }
  | { kind: "timeout"; garbled: boolean }
  | { kind: "error"; message: string };

export async function queryDns(options: QueryOptions): Promise<QueryOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  if (options.signal?.aborted) return { ok: false, failure: "TIMEOUT", message: "aborted before sending", ms: 0 };
  const id = randomInt(0, 65_536);
  // No EDNS: glibc's stub does not send it by default, so answers over 512 bytes take the TCP path as they would for apps.
  const query = {
    type: "query" as const,
    id,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type: options.type, name: options.name }],
  };
  const matches = (reply: DnsReply) => replyMatches(reply, id, options);

  const udp = await udpExchange(dnsPacket.encode(query), matches, options, options.timeoutMs);
  if (udp.kind === "error") return { ok: false, failure: "UNREACHABLE", message: udp.message, ms: elapsed() };
  if (udp.kind === "timeout") {
    const failure = udp.garbled ? "BAD_REPLY" : "TIMEOUT";
    return { ok: false, failure, message: `no valid answer within ${options.timeoutMs} ms`, ms: elapsed() };
  }
  if (!udp.reply.flag_tc) return checked(udp.reply, "udp", elapsed());

  // Truncated over UDP: ask again over TCP with whatever time is left.
  const left = Math.max(1, options.timeoutMs - elapsed());
  const tcp = await tcpExchange(dnsPacket.streamEncode(query), matches, options, left);
  if (tcp.kind === "reply") return checked(tcp.reply, "tcp", elapsed());
  const why = tcp.kind === "timeout" ? `no answer within ${left} ms` : tcp.message;
  return { ok: false, failure: "TCP_FAILED", message: `UDP answer truncated and TCP failed: ${why}`, ms: elapsed() };
}

/**
 * Address records must hold an address: a record whose data length lies decodes to `1.2.undefined.undefined`
 * (dns-packet reads past what was sent). Such a reply is BAD_REPLY, never an answer.
 */
function checked(reply: DnsReply, transport: "udp" | "tcp", ms: number): QueryOutcome {
  const bad = (reply.answers ?? []).find(
    (a) => (a.type === "A" && isIP(String(a.data)) !== 4) || (a.type === "AAAA" && isIP(String(a.data)) !== 6),
  );
  if (bad) return { ok: false, failure: "BAD_REPLY", message: `malformed ${bad.type} record data`, ms };
  return { ok: true, reply, transport, ms };
}

/** A reply counts only if it answers our question with our id (anything else may be spoofed or stale). */
export function replyMatches(reply: DnsReply, id: number, q: Pick<QueryOptions, "name" | "type">): boolean {
  if (reply.id !== id || !reply.flag_qr) return false;
  const question = reply.questions?.[0];
  // Some servers drop the question from error replies; those carry no answers to spoof.
  if (!question) return reply.rcode !== undefined && reply.rcode !== "NOERROR";
  const wanted = q.name.replace(/\.$/, "").toLowerCase();
  return question.name.replace(/\.$/, "").toLowerCase() === wanted && question.type === q.type;
}
