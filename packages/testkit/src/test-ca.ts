/**
 * A certificate authority made by a test, writing PEM files a server reads (TLS_CERT_FILE, TLS_KEY_FILE,
 * TLS_CLIENT_CA_FILE) and a client trusts (its CA file): server certificates for the addresses a test binds,
 * client certificates for mutual TLS. Everything lives in one temp directory removed by `cleanup()`.
 */

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { isIP } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generate } from "selfsigned";

const DAY_MS = 86_400_000;

/** A certificate and its key, as files. */
export interface CertFiles {
  certFile: string;
  keyFile: string;
}

export interface TestCa {
  /** The CA's certificate (PEM): what a client trusts, or a server's TLS_CLIENT_CA_FILE. */
  caFile: string;
  /** A server certificate (serverAuth) naming these IP addresses and DNS names. */
  server(label: string, names: readonly string[]): Promise<CertFiles>;
  /** A client certificate (clientAuth) with this common name. */
  client(label: string): Promise<CertFiles>;
  cleanup(): Promise<void>;
}

type AltName = { type: 2; value: string } | { type: 7; ip: string };

const altName = (name: string): AltName => (isIP(name) ? { type: 7, ip: name } : { type: 2, value: name });

export async function createTestCa(commonName = "RoadNerd Test Fleet CA"): Promise<TestCa> {
  const now = Date.now();
  const from = new Date(now - DAY_MS);
  const to = new Date(now + 30 * DAY_MS);
  const made = await generate([{ name: "commonName", value: commonName }], {
    keyType: "ec",
    algorithm: "sha256",
    notBeforeDate: from,
    notAfterDate: to,
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const ca = { key: made.private, cert: made.cert };
  const dir = await mkdtemp(join(tmpdir(), "roadnerd-ca-"));
  const caFile = join(dir, "ca.pem");
  await writeFile(caFile, ca.cert);

  async function issue(label: string, cn: string, use: "serverAuth" | "clientAuth", names: AltName[]) {
    const pems = await generate([{ name: "commonName", value: cn }], {
      keyType: "ec",
      algorithm: "sha256",
      notBeforeDate: from,
      notAfterDate: to,
      ca,
      extensions: [
        { name: "basicConstraints", cA: false },
        { name: "keyUsage", digitalSignature: true, keyEncipherment: true },
        { name: "extKeyUsage", [use]: true },
        ...(names.length ? [{ name: "subjectAltName" as const, altNames: names }] : []),
      ],
    });
    const files = { certFile: join(dir, `${label}.crt`), keyFile: join(dir, `${label}.key`) };
    await writeFile(files.certFile, pems.cert);
    await writeFile(files.keyFile, pems.private, { mode: 0o600 });
    return files;
  }

  return {
    caFile,
    server: (label, names) => issue(label, names[0] ?? label, "serverAuth", names.map(altName)),
    client: (label) => issue(label, label, "clientAuth", []),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
