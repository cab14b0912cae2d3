/**
 * Talking to a server that serves HTTPS with its own CA (and perhaps asks for client certificates): the files
 * become one undici Agent, and a failed handshake becomes one sentence that says which side to fix.
 */
import { readFileSync } from "node:fs";
import { Agent } from "undici";

/** PEM files: the CA that signed the server's certificate; a client certificate and key for mutual TLS. */
export interface ClientTls {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

function readPem(what: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    const code = err instanceof Error && "code" in err ? String(err.code) : "unreadable";
    throw new Error(`${what} ${path}: cannot read it (${code})`);
  }
}

/** An Agent that trusts only `caFile` (when given) and presents the client certificate (when given). */
export function tlsAgent(tls: ClientTls): Agent {
  if (Boolean(tls.certFile) !== Boolean(tls.keyFile)) throw new Error("a client certificate needs both cert and key");
  return new Agent({
    connect: {
      ...(tls.caFile ? { ca: readPem("CA file", tls.caFile) } : {}),
      ...(tls.certFile ? { cert: readPem("client certificate", tls.certFile) } : {}),
      ...(tls.keyFile ? { key: readPem("client key", tls.keyFile) } : {}),
    },
  });
}

/** OpenSSL's verification codes and Node's TLS errors, as Node reports them in `code`. */
const TLS_CODE = /^(ERR_(SSL|TLS)_|EPROTO$|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|INVALID_CA$|HOSTNAME_MISMATCH$)/;

const UNTRUSTED = /^(UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|CERT_UNTRUSTED$|CERT_SIGNATURE_FAILURE$|INVALID_CA$)/;

/** The first TLS code on the error or its causes. */
function tlsCodeOf(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && typeof e === "object" && e !== null; depth += 1) {
    const code = Reflect.get(e, "code");
    if (typeof code === "string" && TLS_CODE.test(code)) return code;
    e = Reflect.get(e, "cause");
  }
  return undefined;
}

/** A connection to an https:// server that failed in or right after the TLS handshake. Match on `code`. */
export class TlsError extends Error {
  override readonly name = "TlsError";
  readonly code = "E_TLS" as const;
}

/** Did the request go out (the handshake completed) and the server close without one byte of answer? */
function closedAfterHandshake(err: unknown): boolean {
  if (typeof err !== "object" || err === null || Reflect.get(err, "code") !== "UND_ERR_SOCKET") return false;
  const socket = Reflect.get(err, "socket");
  if (typeof socket !== "object" || socket === null) return false;
  const written = Reflect.get(socket, "bytesWritten");
  return typeof written === "number" && written > 0 && Reflect.get(socket, "bytesRead") === 0;
}

/** Why a TLS connection failed, in one sentence with Node's code, or undefined when it was not TLS. */
function describe(err: unknown, clientCert: boolean): string | undefined {
  const code = tlsCodeOf(err);
  // Node's server checks a client certificate after the handshake and closes the connection without an alert.
  if (!code && closedAfterHandshake(err)) {
    return clientCert
      ? "the server closed the connection after the TLS handshake without answering: it refused our client certificate (is it signed by its TLS_CLIENT_CA_FILE?)"
      : "the server closed the connection after the TLS handshake without answering: it requires a client certificate (its TLS_CLIENT_CA_FILE); give ours (cert and key)";
  }
  if (!code) return undefined;
  if (UNTRUSTED.test(code)) return `the server's certificate is not signed by the CA trusted here (${code})`;
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID" || code === "HOSTNAME_MISMATCH")
    return `the server's certificate does not name the address called (${code})`;
  if (code === "CERT_HAS_EXPIRED" || code === "CERT_NOT_YET_VALID")
    return `the server's certificate is outside its validity dates (${code})`;
  if (/CERTIFICATE_REQUIRED|BAD_CERTIFICATE|UNKNOWN_CA|CERTIFICATE_UNKNOWN|ACCESS_DENIED/.test(code))
    return `the server requires a client certificate its CA signed, and refused ours or the lack of one (${code})`;
  if (code === "ERR_SSL_WRONG_VERSION_NUMBER" || code === "EPROTO")
    return `the server does not speak TLS there (an http:// server behind an https:// URL?) (${code})`;
  return `TLS handshake failed (${code})`;
}

/** A failed request to an https:// URL as a TlsError when TLS is why, else undefined (the error stands). */
export function tlsErrorOf(err: unknown, url: string, clientCert: boolean): TlsError | undefined {
  if (!url.startsWith("https:")) return undefined;
  const why = describe(err, clientCert);
  return why ? new TlsError(`${withoutUserinfo(url)}: ${why}`, { cause: err }) : undefined;
}

/** A URL as an error may show it: `https://user:pw@host` loses its credentials (an operator may write them). */
export function withoutUserinfo(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, "$1[masked]@");
}
