/**
 * HTTPS from files (TLS_CERT_FILE, TLS_KEY_FILE; TLS_CLIENT_CA_FILE asks every client for a certificate that CA
 * signed), read and checked once when the app is built: a missing file, a FIFO, a file that is not PEM or does
 * not hold what it is for (pem-files.ts), or a key that does not match its certificate stops the server with
 * one line, never at its first connection.
 */
import { createSecureContext } from "node:tls";
import type { BaseConfig } from "../define/config.ts";
import { DiagError } from "../errors/errors.ts";
import { keyMatchesCertificate, PemFileError, type PemKind, readPemFile } from "./pem-files.ts";

/** What node:https's createServer takes on top of the HTTP options. */
export interface ServerTls {
  cert: Buffer;
  key: Buffer;
  /** Mutual TLS: the CA that signs client certificates; a client without one is refused in the handshake. */
  ca?: Buffer;
  requestCert?: boolean;
  rejectUnauthorized?: boolean;
}

type TlsConfig = Pick<BaseConfig, "TLS_CERT_FILE" | "TLS_KEY_FILE" | "TLS_CLIENT_CA_FILE">;

function readPem(variable: string, path: string, kind: PemKind): Buffer {
  try {
    return readPemFile(path, kind);
  } catch (err) {
    if (err instanceof PemFileError) throw new DiagError("E_INVALID_INPUT", `${variable} ${path}: ${err.message}`);
    throw err;
  }
}

/** The TLS options of the server, or undefined when it serves plain HTTP (no TLS_CERT_FILE). */
export function serverTls(config: TlsConfig): ServerTls | undefined {
  if (!config.TLS_CERT_FILE || !config.TLS_KEY_FILE) return undefined;
  const cert = readPem("TLS_CERT_FILE", config.TLS_CERT_FILE, "certificate");
  const key = readPem("TLS_KEY_FILE", config.TLS_KEY_FILE, "key");
  const ca = config.TLS_CLIENT_CA_FILE ? readPem("TLS_CLIENT_CA_FILE", config.TLS_CLIENT_CA_FILE, "ca") : undefined;
  if (!keyMatchesCertificate(cert, key)) {
    throw new DiagError(
      "E_INVALID_INPUT",
      `TLS_KEY_FILE ${config.TLS_KEY_FILE}: not the private key of TLS_CERT_FILE ${config.TLS_CERT_FILE} (a key of another certificate)`,
    );
  }
  try {
    createSecureContext({ cert, key, ...(ca ? { ca } : {}) });
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new DiagError("E_INVALID_INPUT", `TLS_CERT_FILE/TLS_KEY_FILE/TLS_CLIENT_CA_FILE: ${why}`);
  }
  return ca ? { cert, key, ca, requestCert: true, rejectUnauthorized: true } : { cert, key };
}
