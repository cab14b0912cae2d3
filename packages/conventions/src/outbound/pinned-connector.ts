/**
 * The socket side of an HTTP probe: connect to exactly the address the policy checked, never to what a
 * URL or a resolver says later. undici calls this instead of its own connector, so no lookup (and no
 * IP-literal shortcut around one) can happen inside it. Records connect/TLS timings and the TLS facts
 * a diagnosis needs; an invalid certificate is reported, not refused.
 */
import { isIP, type Socket, connect as tcpConnect } from "node:net";
import { checkServerIdentity, type PeerCertificate, type TLSSocket, connect as tlsConnect } from "node:tls";
import type { buildConnector } from "undici";
import { classifySocketError } from "../errors/socket-errors.ts";
import type { OutboundPolicy } from "./policy.ts";

/** What a TLS handshake told us. */
export interface TlsFacts {
  /** Negotiated ALPN protocol ("h2", "http/1.1"), null when the server chose none. */
  alpn: string | null;
  /** The chain is trusted and the name matches, as a browser would require. */
  authorized: boolean;
  /** OpenSSL/Node code when not authorized, e.g. CERT_HAS_EXPIRED, ERR_TLS_CERT_ALTNAME_INVALID. */
  authorizationError: string | null;
  /** The certificate names the host we asked for (checked separately from the chain). */
  hostnameOk: boolean;
  /** Whole days until the certificate expires (-1: expired a day ago). Null without a certificate. */
  certExpiryDays: number | null;
  issuer: string | null;
  subject: string | null;
  protocol: string | null;
}

/** Timestamps (performance.now()) of one connection's phases. */
export interface ConnectMarks {
  connectStart?: number;
  connected?: number;
  ready?: number;
}

export interface PinnedTarget {
  /** Host as written in the URL (no brackets): SNI and certificate name check use it. */
  host: string;
  /** The checked IPs, in the resolver's order: the next is tried when one refuses or has no route (as curl does). */
  addresses: readonly string[];
  port: number;
  tls: boolean;
  /** Offer h2 by ALPN (undici speaks it when the server picks it). */
  offerH2: boolean;
}

export interface PinnedConnection {
  connector: buildConnector.connector;
  marks: ConnectMarks;
  /** Set after a successful handshake. */
  tls(): TlsFacts | undefined;
  /** The address the connection was made to (the first, or a fallback). */
  connectedAddress(): string;
  /** Destroy the socket whatever state undici left it in (it leaks one after a parser error). */
  close(): void;
}

const DAY_MS = 86_400_000;

/** Errors handed to undici carry a code: undici retries forever on UND_ERR_SOCKET, so never use that one. */
function coded(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

function name(entity: PeerCertificate["issuer"] | undefined): string | null {
  if (!entity) return null;
  const value = entity.O ?? entity.CN;
  return typeof value === "string" ? value.slice(0, 120) : null;
}

export function tlsFacts(socket: TLSSocket, host: string): TlsFacts {
  const cert = socket.getPeerCertificate();
  const hasCert = cert && Object.keys(cert).length > 0;
  const validTo = hasCert ? Date.parse(cert.valid_to) : Number.NaN;
  const authError = socket.authorizationError as unknown;
  return {
    alpn: typeof socket.alpnProtocol === "string" ? socket.alpnProtocol : null,
    authorized: socket.authorized,
    authorizationError: socket.authorized || authError == null ? null : String(authError).slice(0, 80),
    hostnameOk: hasCert ? checkServerIdentity(host, cert) === undefined : false,
    certExpiryDays: Number.isNaN(validTo) ? null : Math.trunc((validTo - Date.now()) / DAY_MS),
    issuer: hasCert ? name(cert.issuer) : null,
    subject: hasCert ? name(cert.subject) : null,
    protocol: socket.getProtocol() ?? null,
  };
}

/**
 * One connector per request hop. It dials only `target.addresses` (each re-checked here, just before its
 * dial), in turn, and only for one request: a second dial on the same hop would be a retry we did not ask for.
 */
export function pinnedConnection(target: PinnedTarget, policy: OutboundPolicy, signal: AbortSignal): PinnedConnection {
  const marks: ConnectMarks = {};
  let facts: TlsFacts | undefined;
  let dialled = false;
  let open: Socket | undefined;

  const candidates = target.addresses;
  let connectedTo = candidates[0] as string;

  const connector: buildConnector.connector = (_opts, callback) => {
    if (dialled) return callback(coded("refusing a second connection on one probe hop", "ERR_PROBE_REDIAL"), null);
    dialled = true;
    marks.connectStart = performance.now();
    let settled = false;
    let socket: Socket | undefined;
    const finish = (err: Error | null) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      if (err) {
        socket?.destroy();
        callback(err, null);
      } else {
        callback(null, socket as Socket);
      }
    };
    const onAbort = () => finish(coded("aborted during connect", "ECONNABORTED"));
    signal.addEventListener("abort", onAbort, { once: true });

    /** One address; on a refusal or no route before connecting, the next checked one. */
    const attempt = (i: number) => {
      const address = candidates[i] as string;
      try {
        policy.checkAddress(address, isIP(target.host) ? undefined : target.host, target.port);
      } catch (err) {
        return finish(err as Error);
      }
      if (signal.aborted) return finish(coded("aborted before connect", "ECONNABORTED"));
      connectedTo = address;
      const s: Socket = target.tls
        ? tlsConnect({
            host: address,
            port: target.port,
            // SNI must be a name (RFC 6066): never an IP literal.
            ...(isIP(target.host) ? {} : { servername: target.host }),
            ALPNProtocols: target.offerH2 ? ["h2", "http/1.1"] : ["http/1.1"],
            // We report bad certificates instead of refusing them; `authorized` says what a browser would do.
            rejectUnauthorized: false,
          })
        : tcpConnect({ host: address, port: target.port });
      s.setNoDelay(true);
      socket = s;
      open = s;
      let connected = false;
      s.once("connect", () => {
        connected = true;
        marks.connected = performance.now();
        if (!target.tls) {
          marks.ready = marks.connected;
          finish(null);
        }
      });
      if (target.tls) {
        s.once("secureConnect", () => {
          marks.ready = performance.now();
          facts = tlsFacts(s as TLSSocket, target.host);
          finish(null);
        });
      }
      s.once("error", (err: NodeJS.ErrnoException) => {
        const kind = classifySocketError(err.code, true).kind;
        if (!connected && (kind === "refused" || kind === "unreachable") && i + 1 < candidates.length && !settled) {
          s.destroy();
          return attempt(i + 1);
        }
        finish(err);
      });
    };
    attempt(0);
  };

  return { connector, marks, tls: () => facts, connectedAddress: () => connectedTo, close: () => open?.destroy() };
}
