/**
 * The tcp prober (blackbox's prober/tcp.go): connect to host:port through the kernel's dial, with TLS when the
 * module says `tls: true` (the `tls` module). Success: connected, and over TLS a trusted certificate unless the
 * module skips verification. A refused or silent port is a failed probe saying where it failed.
 */
import { DialError, defineProber, dial, type ProbeSeries } from "@roadnerd/conventions";
import { z } from "zod";
import { dnsLookup, ipProtocol, tlsOk, tlsSeries } from "./series.ts";

const options = z.strictObject({
  tls: z.boolean().default(false),
  tls_config: z.strictObject({ insecure_skip_verify: z.boolean().default(false) }).default({
    insecure_skip_verify: false,
  }),
});

/** "host:port" or "[v6]:port", as blackbox's targets are written. */
export function hostAndPort(target: string): { host: string; port: number } | null {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(target.replace(/^[a-z]+:\/\//i, "").replace(/\/.*$/, ""));
  const port = Number(m?.[2]);
  if (!m?.[1] || !Number.isInteger(port) || port < 1 || port > 65535) return null;
  return { host: m[1], port };
}

const badTarget: ProbeSeries = {
  name: "roadnerd_probe_error",
  help: "The probe could not be made (1), by error code",
  value: 1,
  labels: { code: "E_INVALID_INPUT" },
};

export const tcpProber = defineProber({
  name: "tcp",
  options,
  defaults: { tcp_connect: {}, tls: { tls: true } },
  async run(target, o, ctx) {
    const at = hostAndPort(target);
    if (!at) return { success: false, series: [badTarget] };
    try {
      const dialed = await dial(ctx.outbound, {
        ...at,
        signal: ctx.signal,
        timeoutMs: ctx.remaining(),
        ...(o.tls ? { tls: {} } : {}),
      });
      dialed.socket.destroy();
      return {
        success: tlsOk(dialed.tls, o.tls_config.insecure_skip_verify),
        series: [dnsLookup(dialed.timing.dns), ipProtocol(dialed.address), ...tlsSeries(dialed.tls)],
      };
    } catch (err) {
      if (!(err instanceof DialError)) throw err;
      return {
        success: false,
        series: [
          dnsLookup(err.timing.dns),
          ipProtocol(err.attempts.at(-1)?.address),
          {
            name: "roadnerd_probe_failed",
            help: "Where the probe failed (1), by phase and diagnosis code",
            value: 1,
            labels: { phase: err.phase, code: err.code },
          },
        ],
      };
    }
  },
});
