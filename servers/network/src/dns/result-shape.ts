/** dns_resolve's result shape: the tool declares it, the summary reads it, tests type against it. */
import { nextField, truncationFields } from "@roadnerd/conventions";
import { z } from "zod";
import { DETAILS } from "./verdict.ts";

export const RECORD_TYPES = ["A", "AAAA", "CNAME", "MX", "TXT", "NS", "PTR"] as const;

const answer = z.object({
  name: z.string().describe("owner name of the record"),
  type: z.string().describe("record type, e.g. A, CNAME"),
  ttl: z.number().int().min(0).describe("TTL in seconds, as received"),
  data: z.string().describe("address, target name, '10 mail.example.com' for MX, joined text for TXT"),
});

export const dnsResultShape = {
  qname: z.string().describe("the name as asked"),
  type: z.enum(RECORD_TYPES).describe("record type asked"),
  query_name: z.string().optional().describe("name actually queried, when it differs (reverse lookups)"),
  answers: z.array(answer).describe("answer records, CNAME chain included"),
  resolver: z.string().describe("IP of the resolver asked"),
  resolver_from: z
    .enum(["input", "resolv_conf", "fallback"])
    .describe("where resolver came from: server input, resolv.conf, or 127.0.0.1 when it lists none"),
  error: z.literal("E_DNS_FAIL").optional().describe("set when the lookup failed; see detail"),
  detail: z.enum(DETAILS).optional().describe("why it failed, or NODATA: name exists but has no such records"),
  rcode: z.string().optional().describe("response code from the resolver, e.g. NOERROR, NXDOMAIN"),
  query_ms: z.number().int().min(0).optional().describe("ms until the answer, or until giving up"),
  transport: z.enum(["udp", "tcp"]).optional().describe("tcp when the UDP answer was truncated"),
  ...truncationFields,
  next: nextField,
};

/** A dns_resolve result before the kernel adds summary and run_id. */
export type DnsResult = z.output<z.ZodObject<typeof dnsResultShape>>;
