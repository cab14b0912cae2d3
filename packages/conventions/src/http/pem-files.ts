/**
 * A PEM file read and checked at start, for the TLS variables and the fleet's files alike: a regular file only
 * (a FIFO opened for reading would block the start until a writer comes), PEM, and holding what it is for — a
 * certificate that parses, a CA that can sign (or a self-signed certificate, pinned), a private key that parses.
 * A bad file is said at start in one line, never as every handshake failing later.
 */

import { createPrivateKey, X509Certificate } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";

export type PemKind = "certificate" | "ca" | "key";

/** Why a file was refused; the caller says which variable or field named it. */
export class PemFileError extends Error {
  override readonly name = "PemFileError";
}

const CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

function kindOf(mode: number): string {
  const type = mode & constants.S_IFMT;
  if (type === constants.S_IFIFO) return "a FIFO";
  if (type === constants.S_IFDIR) return "a directory";
  if (type === constants.S_IFSOCK) return "a socket";
  if (type === constants.S_IFCHR || type === constants.S_IFBLK) return "a device";
  return "not a regular file";
}

function readRegular(path: string): Buffer {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; a regular file reads as usual.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const code = err instanceof Error && "code" in err ? String(err.code) : "unreadable";
    throw new PemFileError(`cannot read it (${code})`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new PemFileError(`${kindOf(stat.mode)}, not a regular file`);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

function checkCertificates(pem: Buffer, kind: "certificate" | "ca"): void {
  const blocks = pem.toString("latin1").match(CERTIFICATE) ?? [];
  if (blocks.length === 0) throw new PemFileError("no certificate in it");
  for (const block of blocks) {
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(block);
    } catch {
      throw new PemFileError("a certificate in it cannot be parsed");
    }
    // A CA file's certificates must be able to sign: a leaf there starts the server, then refuses everyone.
    if (kind === "ca" && !cert.ca && !cert.checkIssued(cert)) {
      throw new PemFileError(
        `${cert.subject.replace(/\n/g, ", ")} is not a CA certificate (CA:FALSE, not self-signed)`,
      );
    }
  }
}

/** The file's bytes, or a PemFileError saying in a few words what is wrong with it. */
export function readPemFile(path: string, kind: PemKind): Buffer {
  const pem = readRegular(path);
  if (!pem.includes("-----BEGIN ")) throw new PemFileError("not a PEM file");
  if (kind === "key") {
    try {
      createPrivateKey(pem);
    } catch {
      throw new PemFileError("no private key in it that can be read (an unencrypted PEM key is needed)");
    }
  } else checkCertificates(pem, kind);
  return pem;
}

/**
 * Is `key` the private key of the first certificate in `cert` (both already read by readPemFile)? A pair that
 * does not match is said at start, naming both files, not as OpenSSL's "key values mismatch" or every
 * handshake failing later.
 */
export function keyMatchesCertificate(cert: Buffer, key: Buffer): boolean {
  const first = cert.toString("latin1").match(CERTIFICATE)?.[0];
  if (!first) return false;
  try {
    return new X509Certificate(first).checkPrivateKey(createPrivateKey(key));
  } catch {
    return false;
  }
}
