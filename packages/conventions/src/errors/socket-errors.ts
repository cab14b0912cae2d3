/**
 * OS and client socket errors, normalised at one boundary for every tool that opens a socket (the HTTP
 * probe, tcp_port_check, DNS on the wire): what kind of failure it is, its diagnosis code and a reason in
 * words. Also the one deadline margin: how much of a call's time a probe leaves for answering.
 */

/** Time a probe leaves before the call's deadline, so its diagnosis is answered before E_TIMEOUT fires. */
export const DEADLINE_MARGIN_MS = 100;

export type SocketFailureKind = "refused" | "closed" | "timeout" | "unreachable" | "dns" | "tls" | "other";

/** The closed set's codes that describe the target rather than the call. */
export type DiagnosisCode = "E_DNS_FAIL" | "E_CONN_REFUSED" | "E_UNREACHABLE" | "E_TLS" | "E_TIMEOUT";

export const DIAGNOSIS_CODES: readonly DiagnosisCode[] = [
  "E_DNS_FAIL",
  "E_CONN_REFUSED",
  "E_UNREACHABLE",
  "E_TLS",
  "E_TIMEOUT",
];

/** OS connect errors that mean "no way there": the network said so (ICMP) or the local routing table did. */
export const UNREACHABLE_REASONS: Readonly<Record<string, string>> = {
  EHOSTUNREACH: "no route to host",
  ENETUNREACH: "network unreachable",
  EHOSTDOWN: "host is down",
  ENETDOWN: "network is down",
  EINVAL: "blackhole route",
  EACCES: "prohibited by a route or firewall",
  EPERM: "prohibited by a local firewall",
  EADDRNOTAVAIL: "no local address to connect from",
};

const CLOSED = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED", "ECONNABORTED"]);
const TIMEOUTS = new Set(["ETIMEDOUT", "UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);
const DNS = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_NONAME", "EAI_FAIL", "EAI_NODATA"]);

const CODE_OF_KIND: Readonly<Record<SocketFailureKind, DiagnosisCode>> = {
  refused: "E_CONN_REFUSED",
  closed: "E_CONN_REFUSED",
  timeout: "E_TIMEOUT",
  unreachable: "E_UNREACHABLE",
  dns: "E_DNS_FAIL",
  tls: "E_TLS",
  other: "E_CONN_REFUSED",
};

export interface SocketFailure {
  kind: SocketFailureKind;
  code: DiagnosisCode;
  /** In words: "connection refused", "no route to host", "connect timeout"… */
  reason: string;
  /** The OS or client error code as received. */
  errno: string;
}

/**
 * Classify an error code. `connecting`: the socket had not connected yet, where a reset means the port
 * refused us and EINVAL/EACCES mean a route said no; later they mean a connection that died.
 */
export function classifySocketError(errno: string | undefined, connecting: boolean): SocketFailure {
  const code = errno ?? "EUNKNOWN";
  const make = (kind: SocketFailureKind, reason: string): SocketFailure => ({
    kind,
    code: CODE_OF_KIND[kind],
    reason,
    errno: code,
  });
  if (code === "ECONNREFUSED") return make("refused", "connection refused");
  if (connecting && code === "ECONNRESET") return make("refused", "connection refused");
  if (DNS.has(code)) return make("dns", "name did not resolve");
  if (TIMEOUTS.has(code)) return make("timeout", connecting ? "connect timeout" : "no answer in time");
  const unreachable = connecting ? UNREACHABLE_REASONS[code] : undefined;
  if (unreachable) return make("unreachable", unreachable);
  if (/^ERR_(SSL|TLS)_|^EPROTO$/.test(code)) return make("tls", "TLS handshake failed");
  if (CLOSED.has(code)) return make("closed", "connection closed before a complete response");
  return make("other", "connection failed");
}

export function errnoOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** "addr:port", IPv6 in brackets. */
export function hostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}
