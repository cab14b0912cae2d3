/** Series several probers share, named and explained as blackbox_exporter does. */
import { isIP } from "node:net";
import type { ProbeSeries, TlsFacts } from "@roadnerd/conventions";

export const seconds = (ms: number) => ms / 1000;

export function ipProtocol(address: string | undefined): ProbeSeries {
  const family = address ? isIP(address.replace(/^\[|\]$/g, "")) : 0;
  return {
    name: "probe_ip_protocol",
    help: "Specifies whether probe ip protocol is IP4 or IP6",
    value: family === 6 ? 6 : family === 4 ? 4 : 0,
  };
}

export function dnsLookup(ms: number): ProbeSeries {
  return {
    name: "probe_dns_lookup_time_seconds",
    help: "Returns the time taken for probe dns lookup in seconds",
    value: seconds(ms),
  };
}

/** "TLSv1.3" as blackbox labels it: "TLS 1.3". */
function tlsVersion(protocol: string | null): string {
  return (protocol ?? "unknown").replace(/^TLSv/, "TLS ");
}

export function tlsSeries(tls: TlsFacts | null): ProbeSeries[] {
  if (!tls) return [];
  const series: ProbeSeries[] = [
    {
      name: "probe_tls_version_info",
      help: "Returns the TLS version used or NaN when unknown",
      value: 1,
      labels: { version: tlsVersion(tls.protocol) },
    },
    {
      name: "roadnerd_probe_tls_authorized",
      help: "The certificate chain is trusted and names the host (1), as a browser requires",
      value: tls.authorized ? 1 : 0,
    },
  ];
  if (tls.certNotAfterMs !== null) {
    series.push({
      name: "probe_ssl_earliest_cert_expiry",
      help: "Returns last SSL chain expiry in unixtime",
      value: Math.floor(tls.certNotAfterMs / 1000),
    });
  }
  return series;
}

/** blackbox's `tls_config.insecure_skip_verify`: the certificate is reported, not judged. */
export function tlsOk(tls: TlsFacts | null, skipVerify: boolean): boolean {
  return tls === null || skipVerify || tls.authorized;
}
