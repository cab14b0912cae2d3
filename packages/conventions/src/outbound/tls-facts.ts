/** What a TLS handshake told us, read off the socket once it is secure: reported, never a reason to refuse. */
import { checkServerIdentity, type PeerCertificate, type TLSSocket } from "node:tls";

export interface TlsFacts {
  /** Negotiated ALPN protocol ("h2", "http/1.1"), null when the server chose none. */
  alpn: string | null;
  /**
   * The chain is trusted and (unless the dial was asked to judge the chain alone) the name matches, as a browser
   * would require.
   */
  authorized: boolean;
  /** OpenSSL/Node code when not authorized, e.g. CERT_HAS_EXPIRED, ERR_TLS_CERT_ALTNAME_INVALID. */
  authorizationError: string | null;
  /** The certificate names the host we asked for (checked separately from the chain). */
  hostnameOk: boolean;
  /** Why the certificate does not name the host (the names it does carry); null when it does. */
  nameError: string | null;
  /** Whole days until the certificate expires (-1: expired a day ago). Null without a certificate. */
  certExpiryDays: number | null;
  /** When the certificate expires (ms since the epoch; a probe's probe_ssl_earliest_cert_expiry). Null without one. */
  certNotAfterMs: number | null;
  issuer: string | null;
  subject: string | null;
  protocol: string | null;
  cipher: string | null;
}

const DAY_MS = 86_400_000;

function entity(e: PeerCertificate["issuer"] | undefined): string | null {
  if (!e) return null;
  const value = e.O ?? e.CN;
  return typeof value === "string" ? value.slice(0, 120) : null;
}

/** `host` is the name (or IP) the certificate must carry: the target as asked, not the address dialled. */
export function tlsFacts(socket: TLSSocket, host: string): TlsFacts {
  const cert = socket.getPeerCertificate();
  const hasCert = cert && Object.keys(cert).length > 0;
  const validTo = hasCert ? Date.parse(cert.valid_to) : Number.NaN;
  const authError = socket.authorizationError as unknown;
  const nameErr = hasCert ? checkServerIdentity(host, cert) : new Error("no certificate");
  const cipher = socket.getCipher();
  return {
    alpn: typeof socket.alpnProtocol === "string" ? socket.alpnProtocol : null,
    authorized: socket.authorized,
    authorizationError: socket.authorized || authError == null ? null : String(authError).slice(0, 80),
    hostnameOk: nameErr === undefined,
    nameError: nameErr ? String((nameErr as { reason?: string }).reason ?? nameErr.message).slice(0, 200) : null,
    certExpiryDays: Number.isNaN(validTo) ? null : Math.trunc((validTo - Date.now()) / DAY_MS),
    certNotAfterMs: Number.isNaN(validTo) ? null : validTo,
    issuer: hasCert ? entity(cert.issuer) : null,
    subject: hasCert ? entity(cert.subject) : null,
    protocol: socket.getProtocol() ?? null,
    cipher: cipher?.standardName ?? cipher?.name ?? null,
  };
}
