/**
 * HTTPS serving: TLS_CERT_FILE/TLS_KEY_FILE make a server speak HTTPS on every route, TLS_CLIENT_CA_FILE makes
 * it ask for client certificates, and a bind beyond loopback needs TLS (or ALLOW_PLAINTEXT=1) on top of the
 * token. Real servers (hostHttp) with certificates from a CA made here, called through @roadnerd/client.
 */
import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type ClientTls, createClient } from "@roadnerd/client";
import { type CertFiles, createTestCa, type TestCa } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HostError, type HostedHttp, hostHttp } from "../src/http/host-http.ts";
import { demoServer } from "./fixtures/demo-server.ts";

const TOKEN = "a-test-token-of-24-chars";
let ca: TestCa;
let other: TestCa;
let server: CertFiles;
let clientCert: CertFiles;
let strangerCert: CertFiles;
const hosted: HostedHttp[] = [];

async function host(env: Record<string, string>): Promise<HostedHttp> {
  const h = await hostHttp(demoServer, { env: { HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "silent", ...env } });
  hosted.push(h);
  return h;
}

/** What hostHttp refused with (kind and message), or a failure when it started. */
async function refusal(env: Record<string, string>): Promise<HostError> {
  const h = await host(env).catch((e: unknown) => e);
  if (!(h instanceof HostError)) throw new Error(`expected a refusal, got ${JSON.stringify(h)}`);
  return h;
}

beforeAll(async () => {
  [ca, other] = await Promise.all([createTestCa(), createTestCa("Another CA")]);
  [server, clientCert, strangerCert] = await Promise.all([
    ca.server("local", ["127.0.0.1", "localhost"]),
    ca.client("gateway"),
    other.client("stranger"),
  ]);
});

afterAll(async () => {
  await Promise.all(hosted.map((h) => h.close()));
  await Promise.all([ca?.cleanup(), other?.cleanup()]);
});

describe("HTTPS from TLS_CERT_FILE and TLS_KEY_FILE", () => {
  let h: HostedHttp;
  const tlsEnv = () => ({ TLS_CERT_FILE: server.certFile, TLS_KEY_FILE: server.keyFile });

  beforeAll(async () => {
    h = await host(tlsEnv());
  });

  it("serves every route over HTTPS to a client that trusts its CA", async () => {
    expect(h.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const client = createClient(h.url, { tls: { caFile: ca.caFile } });
    try {
      expect(await client.healthz()).toMatchObject({ ok: true, name: "roadnerd-demo" });
      expect(await client.call("echo_name", { name: "example.com" })).toMatchObject({ name: "example.com" });
    } finally {
      await client.close();
    }
  });

  it("a client trusting another CA fails the handshake, said as a certificate it does not trust", async () => {
    const client = createClient(h.url, { tls: { caFile: other.caFile } });
    const err = await client.healthz().catch((e: unknown) => e);
    await client.close();
    expect(err).toMatchObject({ name: "TlsError", code: "E_TLS" });
    expect(String(Reflect.get(Object(err), "message"))).toMatch(
      /^https:\/\/127\.0\.0\.1:\d+: the server's certificate is not signed by the CA trusted here \((UNABLE_TO_|SELF_SIGNED)/,
    );
  });

  it("plain HTTP to it is no answer; an https client at a plain server is told it does not speak TLS", async () => {
    const plain = await host({});
    const client = createClient(plain.url.replace("http:", "https:"), { tls: { caFile: ca.caFile } });
    const err = await client.healthz().catch((e: unknown) => e);
    await client.close();
    expect(err).toMatchObject({ code: "E_TLS", message: expect.stringMatching(/does not speak TLS there/) });
  });
});

describe("client certificates (TLS_CLIENT_CA_FILE)", () => {
  let h: HostedHttp;

  beforeAll(async () => {
    h = await host({ TLS_CERT_FILE: server.certFile, TLS_KEY_FILE: server.keyFile, TLS_CLIENT_CA_FILE: ca.caFile });
  });

  it("a client with a certificate that CA signed is served", async () => {
    const client = createClient(h.url, { tls: { caFile: ca.caFile, ...clientCert } });
    const health = await client.healthz();
    await client.close();
    expect(health).toMatchObject({ ok: true, name: "roadnerd-demo" });
  });

  it("a client without one, or with one another CA signed, is refused in the handshake", async () => {
    const attempts: ClientTls[] = [{ caFile: ca.caFile }, { caFile: ca.caFile, ...strangerCert }];
    for (const tls of attempts) {
      const client = createClient(h.url, { tls });
      const err = await client.healthz().catch((e: unknown) => e);
      await client.close();
      // Node's server checks the certificate after the handshake and closes without an alert: said as such.
      const why = tls.certFile ? "it refused our client certificate" : "it requires a client certificate";
      expect(err).toMatchObject({ code: "E_TLS", message: expect.stringContaining(why) });
    }
  });
});

describe("a bind beyond loopback", () => {
  it("without TLS refuses to start and names both ways out", async () => {
    const e = await refusal({ HOST: "0.0.0.0", AUTH_TOKEN: TOKEN });
    expect(e.kind).toBe("usage");
    expect(e.message).toMatch(/refusing to bind 0\.0\.0\.0 without TLS/);
    expect(e.message).toContain("TLS_CERT_FILE and TLS_KEY_FILE");
    expect(e.message).toContain("ALLOW_PLAINTEXT=1");
  });

  it("still needs the token first, TLS or not", async () => {
    const e = await refusal({ HOST: "0.0.0.0", TLS_CERT_FILE: server.certFile, TLS_KEY_FILE: server.keyFile });
    expect(e.message).toMatch(/without AUTH_TOKEN/);
  });

  it("starts with TLS, or in plain HTTP with the explicit ALLOW_PLAINTEXT=1", async () => {
    const secure = await host({
      HOST: "0.0.0.0",
      AUTH_TOKEN: TOKEN,
      TLS_CERT_FILE: server.certFile,
      TLS_KEY_FILE: server.keyFile,
    });
    expect(secure.url).toMatch(/^https:\/\/0\.0\.0\.0:\d+$/);
    const plain = await host({ HOST: "0.0.0.0", AUTH_TOKEN: TOKEN, ALLOW_PLAINTEXT: "1" });
    expect(plain.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
  });
});

describe("TLS files are checked at start", () => {
  it("a certificate without its key (or the reverse, or a client CA alone) is an environment error", async () => {
    expect((await refusal({ TLS_CERT_FILE: server.certFile })).message).toContain(
      "TLS_KEY_FILE: TLS_CERT_FILE needs it",
    );
    expect((await refusal({ TLS_KEY_FILE: server.keyFile })).message).toContain("TLS_CERT_FILE: TLS_KEY_FILE needs it");
    expect((await refusal({ TLS_CLIENT_CA_FILE: ca.caFile })).message).toMatch(
      /TLS_CLIENT_CA_FILE: client certificates need/,
    );
  });

  it("a missing file, a file that is not PEM, and a key of another certificate: one line each", async () => {
    const missing = await refusal({ TLS_CERT_FILE: "/nonexistent/cert.pem", TLS_KEY_FILE: server.keyFile });
    expect(missing).toMatchObject({
      kind: "usage",
      message: "TLS_CERT_FILE /nonexistent/cert.pem: cannot read it (ENOENT)",
    });
    const text = join(ca.caFile, "..", "not-pem.txt");
    await writeFile(text, "hello\n");
    expect((await refusal({ TLS_CERT_FILE: server.certFile, TLS_KEY_FILE: text })).message).toBe(
      `TLS_KEY_FILE ${text}: not a PEM file`,
    );
    const mismatch = await refusal({ TLS_CERT_FILE: server.certFile, TLS_KEY_FILE: clientCert.keyFile });
    // Regression (sealed attacker review F11): OpenSSL's "key values mismatch" named neither variable's path.
    expect(mismatch.message).toBe(
      `TLS_KEY_FILE ${clientCert.keyFile}: not the private key of TLS_CERT_FILE ${server.certFile} (a key of another certificate)`,
    );
  });

  // Regression (attacker review F8): a client CA file holding no certificate (garbage with a PEM header, a key)
  // or a leaf started the server, which then refused every client; an empty TLS_CLIENT_CA_FILE= turned client
  // certificates off; a FIFO as the certificate hung the start.
  it("a client CA file that holds no CA certificate: one line naming the variable and the path", async () => {
    const junk = join(ca.caFile, "..", "junk-ca.pem");
    await writeFile(junk, "-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n");
    const tlsEnv = { TLS_CERT_FILE: server.certFile, TLS_KEY_FILE: server.keyFile };
    for (const [file, why] of [
      [junk, "a certificate in it cannot be parsed"],
      [clientCert.keyFile, "no certificate in it"],
      [server.certFile, "is not a CA certificate"],
    ] as const) {
      const e = await refusal({ ...tlsEnv, TLS_CLIENT_CA_FILE: file });
      expect(e.kind).toBe("usage");
      expect(e.message).toMatch(
        new RegExp(`^TLS_CLIENT_CA_FILE ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: .*${why}`),
      );
    }
  });

  it("a TLS variable set but empty is refused, not read as unset", async () => {
    const tlsEnv = { TLS_CERT_FILE: server.certFile, TLS_KEY_FILE: server.keyFile };
    for (const name of ["TLS_CLIENT_CA_FILE", "TLS_CERT_FILE", "TLS_KEY_FILE"]) {
      const e = await refusal({ ...tlsEnv, [name]: "" });
      expect(e.kind).toBe("usage");
      expect(e.message).toContain(`${name}: set but empty`);
    }
  });

  it("a FIFO as the certificate or the key is refused at once, not waited on", async () => {
    const fifo = join(ca.caFile, "..", "cert.fifo");
    execFileSync("mkfifo", [fifo]);
    const e = await refusal({ TLS_CERT_FILE: fifo, TLS_KEY_FILE: server.keyFile });
    expect(e).toMatchObject({ kind: "usage", message: `TLS_CERT_FILE ${fifo}: a FIFO, not a regular file` });
    const k = await refusal({ TLS_CERT_FILE: server.certFile, TLS_KEY_FILE: fifo });
    expect(k.message).toBe(`TLS_KEY_FILE ${fifo}: a FIFO, not a regular file`);
  });
});
