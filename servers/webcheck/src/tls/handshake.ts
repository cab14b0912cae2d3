/**
 * One TLS handshake to exactly the address the policy checked, reporting the certificate whatever is wrong
 * with it: the chain is verified by OpenSSL (`rejectUnauthorized: false`, then `authorizationError`), and the
 * name is checked on its own with `tls.checkServerIdentity`, because a chain error hides a name error (Node
 * only checks the name once the chain verified). A refused port or a failed handshake is a diagnosis.
 */
import { isIP, type Socket } from "node:net";
import {
  checkServerIdentity,
  connect,
  type DetailedPeerCertificate,
  type PeerCertificate,
  type SecureContext,
  type TLSSocket,
} from "node:tls";
import {
  classifySocketError,
  DiagError,
  type DiagnosisCode,
  hostPort,
  type OutboundPolicy,
  type ResolvedTarget,
} from "@roadnerd/conventions";

export interface CertFacts {
  subject: string | null;
  issuer: string | null;
  sans: string[];
  validFrom: string | null;
  validTo: string | null;
  expiryDays: number | null;
  /** Subjects from the leaf up (to the trusted root when the chain verifies). */
  chain: string[];
}

export interface HandshakeFacts {
  address: string;
  protocol: string | null;
  cipher: string | null;
  alpn: string | null;
  cert: CertFacts;
  /** OpenSSL's verdict on the chain alone (expiry included); null when it verifies. */
  chainError: string | null;
  /** The certificate does not name the host; null when it does. */
  nameError: string | null;
}

export interface HandshakeTiming {
  dns: number;
  connect: number;
  tls: number;
  total: number;
}

export type HandshakeResult =
  | { ok: true; facts: HandshakeFacts; timing: HandshakeTiming }
  | { ok: false; code: DiagnosisCode; detail: string; timing: HandshakeTiming };

export interface HandshakeOptions {
  signal: AbortSignal;
  timeoutMs: number;
  /** The system's roots plus extra trusted CAs (built once per CA file: parsing the roots costs ~70 ms). */
  secureContext?: SecureContext | undefined;
}

const DAY_MS = 86_400_000;
const MAX_SANS = 50;

function entityName(entity: PeerCertificate["issuer"] | undefined): string | null {
  if (!entity) return null;
  const value = entity.CN ?? entity.O;
  return typeof value === "string" ? value.slice(0, 160) : null;
}

/** "DNS:a.example, IP Address:127.0.0.1" → ["a.example", "127.0.0.1"]. */
export function parseSans(subjectaltname: string | undefined): string[] {
  if (!subjectaltname) return [];
  return subjectaltname
    .split(/,\s*/)
    .map((part) => part.replace(/^(DNS|IP Address|email|URI):/, ""))
    .filter((v) => v.length > 0)
    .slice(0, MAX_SANS);
}

function certFacts(cert: DetailedPeerCertificate): CertFacts {
  const present = Object.keys(cert).length > 0;
  if (!present)
    return { subject: null, issuer: null, sans: [], validFrom: null, validTo: null, expiryDays: null, chain: [] };
  const validTo = Date.parse(cert.valid_to);
  const chain: string[] = [];
  const seen = new Set<string>();
  for (let c: DetailedPeerCertificate | undefined = cert; c && chain.length < 8; c = c.issuerCertificate) {
    // A self-signed root points at itself.
    if (seen.has(c.fingerprint256)) break;
    seen.add(c.fingerprint256);
    chain.push(entityName(c.subject) ?? "?");
  }
  return {
    subject: entityName(cert.subject),
    issuer: entityName(cert.issuer),
    sans: parseSans(cert.subjectaltname),
    validFrom: Number.isNaN(Date.parse(cert.valid_from)) ? null : new Date(cert.valid_from).toISOString(),
    validTo: Number.isNaN(validTo) ? null : new Date(validTo).toISOString(),
    expiryDays: Number.isNaN(validTo) ? null : Math.trunc((validTo - Date.now()) / DAY_MS) || 0,
    chain,
  };
}

const ms = (from: number, to: number) => Math.max(0, Math.round((to - from) * 10) / 10);

export async function tlsHandshake(
  policy: OutboundPolicy,
  host: string,
  port: number,
  options: HandshakeOptions,
): Promise<HandshakeResult> {
  const started = performance.now();
  const timer = AbortSignal.timeout(options.timeoutMs);
  const signal = AbortSignal.any([options.signal, timer]);
  let resolved: ResolvedTarget;
  try {
    resolved = await policy.resolveTarget(host, signal, port);
  } catch (err) {
    const timing = { dns: ms(started, performance.now()), connect: 0, tls: 0, total: ms(started, performance.now()) };
    if (err instanceof DiagError && err.code === "E_DNS_FAIL")
      return { ok: false, code: "E_DNS_FAIL", detail: err.message, timing };
    if (err instanceof DiagError && err.code === "E_TIMEOUT")
      return { ok: false, code: "E_TIMEOUT", detail: err.message, timing };
    throw err;
  }
  const dnsMs = resolved.dnsMs;
  let last: HandshakeResult | undefined;
  for (const address of resolved.addresses) {
    // Checked again just before the dial, as the kernel's pinned connector does.
    policy.checkAddress(address, isIP(host) ? undefined : host, port);
    last = await attempt(address, host, port, options.secureContext, signal, started, dnsMs);
    // Only "nobody there" moves on to the next address, as curl does.
    if (last.ok || (last.code !== "E_CONN_REFUSED" && last.code !== "E_UNREACHABLE")) break;
  }
  if (!last) throw new DiagError("E_DNS_FAIL", `${host} has no addresses`);
  if (!last.ok && timer.aborted && !options.signal.aborted) {
    return {
      ...last,
      code: "E_TIMEOUT",
      detail: `TLS handshake timeout (${hostPort(host, port)}, timeout ${options.timeoutMs} ms)`,
    };
  }
  return last;
}

function attempt(
  address: string,
  host: string,
  port: number,
  secureContext: SecureContext | undefined,
  signal: AbortSignal,
  started: number,
  dnsMs: number,
): Promise<HandshakeResult> {
  return new Promise((resolve) => {
    const dialled = performance.now();
    let connectedAt: number | undefined;
    const socket: TLSSocket = connect({
      host: address,
      port,
      // SNI must be a name (RFC 6066), never an IP literal.
      ...(isIP(host) ? {} : { servername: host }),
      ALPNProtocols: ["h2", "http/1.1"],
      rejectUnauthorized: false,
      // The chain alone: the name is checked below, separately, so each has its own answer.
      checkServerIdentity: () => undefined,
      ...(secureContext ? { secureContext } : {}),
    });
    const timing = (): HandshakeTiming => {
      const now = performance.now();
      return {
        dns: dnsMs,
        connect: connectedAt === undefined ? ms(dialled, now) : ms(dialled, connectedAt),
        tls: connectedAt === undefined ? 0 : ms(connectedAt, now),
        total: ms(started, now),
      };
    };
    const where = hostPort(address, port);
    const done = (result: HandshakeResult) => {
      signal.removeEventListener("abort", onAbort);
      socket.destroy();
      resolve(result);
    };
    const onAbort = () =>
      done({
        ok: false,
        code: "E_TIMEOUT",
        detail: `TLS handshake did not finish (address ${where})`,
        timing: timing(),
      });
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    (socket as Socket).once("connect", () => {
      connectedAt = performance.now();
    });
    socket.once("secureConnect", () => {
      const cert = socket.getPeerCertificate(true);
      const hasCert = Object.keys(cert).length > 0;
      const nameErr = hasCert ? checkServerIdentity(host, cert) : new Error("no certificate");
      const chainErr = socket.authorized ? null : String(socket.authorizationError ?? "UNKNOWN").slice(0, 80);
      done({
        ok: true,
        facts: {
          address,
          protocol: socket.getProtocol() ?? null,
          cipher: socket.getCipher()?.standardName ?? socket.getCipher()?.name ?? null,
          alpn: typeof socket.alpnProtocol === "string" ? socket.alpnProtocol : null,
          cert: certFacts(cert),
          chainError: chainErr,
          nameError: nameErr ? String((nameErr as { reason?: string }).reason ?? nameErr.message).slice(0, 200) : null,
        },
        timing: timing(),
      });
    });
    socket.once("error", (err: NodeJS.ErrnoException) => {
      const failure = classifySocketError(err.code, connectedAt === undefined);
      const code: DiagnosisCode = connectedAt !== undefined && failure.kind !== "timeout" ? "E_TLS" : failure.code;
      // OpenSSL's own message carries its source path; its reason and code say the same in a line.
      const reason = (err as { reason?: string }).reason ?? err.message.split(":").at(-1) ?? "";
      const text =
        code === "E_TLS" ? `TLS handshake failed: ${reason.slice(0, 120)} (${err.code ?? "?"})` : failure.reason;
      done({ ok: false, code, detail: `${text} (address ${where})`, timing: timing() });
    });
  });
}
