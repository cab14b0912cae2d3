/**
 * One TLS handshake through the kernel's dial (to exactly the address the policy checked), reporting the
 * certificate whatever is wrong with it: the chain is verified by OpenSSL (`rejectUnauthorized: false`, then
 * `authorizationError`), and the name is checked on its own, because a chain error hides a name error (Node only
 * checks the name once the chain verified). A refused port or a failed handshake is a diagnosis.
 */
import type { DetailedPeerCertificate, PeerCertificate, SecureContext, TLSSocket } from "node:tls";
import {
  type DiagnosisCode,
  DialError,
  type Dialed,
  dial,
  hostPort,
  type OutboundPolicy,
  type PhaseTiming,
  spanMs,
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

export type HandshakeTiming = Pick<PhaseTiming, "dns" | "connect" | "tls" | "total">;

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

/** The handshake's phases, from the kernel's one timing shape. */
function handshakeTiming(t: PhaseTiming, started: number): HandshakeTiming {
  return { dns: t.dns, connect: t.connect, tls: t.tls, total: spanMs(started) };
}

export async function tlsHandshake(
  policy: OutboundPolicy,
  host: string,
  port: number,
  options: HandshakeOptions,
): Promise<HandshakeResult> {
  const started = performance.now();
  const timer = AbortSignal.timeout(options.timeoutMs);
  const signal = AbortSignal.any([options.signal, timer]);
  let dialed: Dialed<TLSSocket>;
  try {
    // The chain judged alone (nameInVerdict false): a chain error must not hide a name error; the name is
    // judged apart, each with its own answer.
    dialed = await dial(policy, {
      host,
      port,
      signal,
      tls: { alpn: ["h2", "http/1.1"], secureContext: options.secureContext, nameInVerdict: false },
    });
  } catch (err) {
    if (!(err instanceof DialError)) throw err;
    const timing = handshakeTiming(err.timing, started);
    if (err.code === "E_TIMEOUT" && err.phase !== "dns" && timer.aborted && !options.signal.aborted) {
      const detail = `TLS handshake timeout (${hostPort(host, port)}, timeout ${options.timeoutMs} ms)`;
      return { ok: false, code: "E_TIMEOUT", detail, timing };
    }
    return { ok: false, code: err.code, detail: err.message, timing };
  }
  const { socket, tls, address } = dialed;
  try {
    const cert = socket.getPeerCertificate(true);
    return {
      ok: true,
      facts: {
        address,
        protocol: tls.protocol,
        cipher: tls.cipher,
        alpn: tls.alpn,
        cert: certFacts(cert),
        chainError: tls.authorized ? null : (tls.authorizationError ?? "UNKNOWN"),
        nameError: tls.nameError,
      },
      timing: handshakeTiming(dialed.timing, started),
    };
  } finally {
    socket.destroy();
  }
}
