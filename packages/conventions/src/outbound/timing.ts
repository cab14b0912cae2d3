/**
 * The one timing shape of every tool that reaches out: the dial fills the connection's phases, the HTTP layer
 * adds the first byte and the total. `timing_ms` in a tool's output is this schema (or a pick of it).
 */
import { z } from "zod";

export const timingMsField = z
  .object({
    dns: z.number().min(0).describe("name lookup ms (0 for an IP)"),
    connect: z.number().min(0).describe("TCP connect ms (0 through a proxy)"),
    tls: z.number().min(0).describe("TLS handshake ms with the target (0 without TLS)"),
    ttfb: z.number().min(0).describe("request sent to response headers, ms"),
    total: z.number().min(0).describe("whole check, ms"),
    proxy_connect: z.number().min(0).optional().describe("TCP (and TLS) to the proxy, ms; through a proxy only"),
    tunnel: z.number().min(0).optional().describe("CONNECT answered by the proxy, ms; through a proxy only"),
  })
  .describe("ms per phase");

export type PhaseTiming = z.infer<typeof timingMsField>;

/** Milliseconds between two performance.now() marks, to a tenth (0 when either is missing). */
export function spanMs(from: number | undefined, to: number | undefined = performance.now()): number {
  return from === undefined || to === undefined ? 0 : Math.max(0, Math.round((to - from) * 10) / 10);
}
