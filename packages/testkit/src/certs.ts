/**
 * Certificates a test generates: a throwaway CA, a leaf it signed that is valid for localhost/127.0.0.1/::1,
 * one that expired, one for the wrong name. The CA is written to a file so a spawned server can trust it
 * through NODE_EXTRA_CA_CERTS (read by Node at start-up) and report `authorized: true` for the valid one.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generate } from "selfsigned";

export interface KeyCert {
  key: string;
  cert: string;
}

export interface TestCerts {
  ca: KeyCert;
  /** Path of the CA certificate (PEM), for NODE_EXTRA_CA_CERTS. */
  caFile: string;
  /** Signed by the CA, valid now, names localhost, 127.0.0.1 and ::1 (and the extra names asked for). */
  valid: KeyCert;
  /** Signed by the CA, expired yesterday, same names as `valid`. */
  expired: KeyCert;
  /** Signed by the CA, valid now, names only wrong.example. */
  wrongName: KeyCert;
  /** Self-signed (no CA), valid now, same names as `valid`. */
  selfSigned: KeyCert;
  cleanup(): Promise<void>;
}

const DAY_MS = 86_400_000;
export const WRONG_NAME = "wrong.example";

type AltName = { type: 2; value: string } | { type: 7; ip: string };

function leafExtensions(names: AltName[]) {
  return [
    { name: "basicConstraints" as const, cA: false },
    { name: "keyUsage" as const, digitalSignature: true, keyEncipherment: true },
    { name: "extKeyUsage" as const, serverAuth: true },
    { name: "subjectAltName" as const, altNames: names },
  ];
}

async function leaf(cn: string, names: AltName[], ca: KeyCert | undefined, from: Date, to: Date): Promise<KeyCert> {
  const pems = await generate([{ name: "commonName", value: cn }], {
    keyType: "ec",
    algorithm: "sha256",
    notBeforeDate: from,
    notAfterDate: to,
    extensions: leafExtensions(names),
    ...(ca ? { ca } : {}),
  });
  return { key: pems.private, cert: pems.cert };
}

export async function generateTestCerts(extraNames: readonly string[] = []): Promise<TestCerts> {
  const now = Date.now();
  const caPems = await generate([{ name: "commonName", value: "RoadNerd Test CA" }], {
    keyType: "ec",
    algorithm: "sha256",
    notBeforeDate: new Date(now - DAY_MS),
    notAfterDate: new Date(now + 30 * DAY_MS),
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const ca = { key: caPems.private, cert: caPems.cert };
  const names: AltName[] = [
    { type: 2, value: "localhost" },
    ...extraNames.map((value): AltName => ({ type: 2, value })),
    { type: 7, ip: "127.0.0.1" },
    { type: 7, ip: "::1" },
  ];
  const soon = new Date(now + 90 * DAY_MS);
  const [valid, expired, wrongName, selfSigned] = await Promise.all([
    leaf("localhost", names, ca, new Date(now - DAY_MS), soon),
    leaf("localhost", names, ca, new Date(now - 30 * DAY_MS), new Date(now - DAY_MS)),
    leaf(WRONG_NAME, [{ type: 2, value: WRONG_NAME }], ca, new Date(now - DAY_MS), soon),
    leaf("localhost", names, undefined, new Date(now - DAY_MS), soon),
  ]);
  const dir = await mkdtemp(join(tmpdir(), "roadnerd-certs-"));
  const caFile = join(dir, "ca.pem");
  await writeFile(caFile, ca.cert);
  return {
    ca,
    caFile,
    valid,
    expired,
    wrongName,
    selfSigned,
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
