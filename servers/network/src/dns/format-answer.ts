/** Turn decoded resource records into the flat `{ name, type, ttl, data }` rows dns_resolve returns. */
import { cutText } from "@roadnerd/conventions";
import type { Answer } from "dns-packet";

export interface AnswerRow {
  name: string;
  type: string;
  ttl: number;
  data: string;
}

/** Bytes a reader should not get raw (control characters, DEL, non-ASCII), written as dig does: \DDD. */
export function escapeBytes(bytes: Buffer): string {
  let out = "";
  for (const b of bytes) out += b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : `\\${String(b).padStart(3, "0")}`;
  return out;
}

/** The rdata as one line: MX "10 mail.example.com", TXT strings joined, names without the trailing dot. */
export function formatData(answer: Answer): string {
  switch (answer.type) {
    case "A":
    case "AAAA":
    case "CNAME":
    case "DNAME":
    case "NS":
    case "PTR":
      return answer.data;
    case "MX":
      return `${answer.data.preference ?? 0} ${answer.data.exchange}`;
    case "TXT": {
      // Several strings in one record are one value (SPF, DKIM split at 255 bytes): join them as-is.
      const parts = Array.isArray(answer.data) ? answer.data : [answer.data];
      return parts.map((p) => escapeBytes(Buffer.isBuffer(p) ? p : Buffer.from(p))).join("");
    }
    case "SOA":
      return `${answer.data.mname} ${answer.data.rname} ${answer.data.serial ?? 0}`;
    case "SRV":
      return `${answer.data.priority ?? 0} ${answer.data.weight ?? 0} ${answer.data.port} ${answer.data.target}`;
    case "OPT":
      return "";
    default:
      return Buffer.isBuffer(answer.data) ? `(${answer.data.length} bytes)` : "(unparsed)";
  }
}

/** Rows for every record in the answer section (a CNAME chain included), OPT pseudo-records dropped. */
export function formatAnswers(answers: readonly Answer[], maxData = 300): AnswerRow[] {
  return answers
    .filter((a) => a.type !== "OPT")
    .map((a) => ({
      name: a.name,
      type: a.type,
      ttl: "ttl" in a && typeof a.ttl === "number" ? a.ttl : 0,
      data: cutText(formatData(a), maxData),
    }));
}
