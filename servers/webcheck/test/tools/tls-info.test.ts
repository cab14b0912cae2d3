/**
 * tls_info against TLS servers this test starts with certificates it generates (a private CA, a valid leaf,
 * an expired one, one for the wrong name, a self-signed one): exact fields for each, the chain and the name
 * judged separately, failures as diagnoses, refusals before any connection.
 */

import type { AddressInfo } from "node:net";
import { createServer, type Server } from "node:net";
import { callTool } from "@roadnerd/conventions/testing";
import {
  CLOSED_PORT,
  generateTestCerts,
  scaledDeadline,
  startTestServer,
  type TestCerts,
  type TestServer,
  WRONG_NAME,
} from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { server } from "../../src/server.ts";
import { tlsInfo } from "../../src/tools/tls-info.ts";

let certs: TestCerts;
const servers: Record<string, TestServer> = {};
let plain: TestServer;
let silent: Server;
let env: Record<string, string>;

const ok = (_req: unknown, res: import("node:http").ServerResponse) => res.end("ok");

beforeAll(async () => {
  certs = await generateTestCerts();
  for (const kind of ["valid", "expired", "wrongName", "selfSigned"] as const) {
    servers[kind] = await startTestServer(ok, { tls: certs[kind] });
  }
  plain = await startTestServer(ok);
  // Accepts and never answers: the handshake can only time out.
  silent = createServer(() => undefined);
  await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
  env = { OUTBOUND_ALLOW: "127.0.0.1,localhost", WEBCHECK_CA_FILE: certs.caFile };
});

afterAll(async () => {
  for (const s of Object.values(servers)) await s.close();
  await plain?.close();
  silent?.close();
  await certs?.cleanup();
});

const port = (kind: string) => servers[kind]?.port;
const SANS = ["localhost", "127.0.0.1", "0:0:0:0:0:0:0:1"];

describe("tls_info", () => {
  it("a valid certificate from a trusted CA: every field", async () => {
    const r = await callTool(
      server,
      tlsInfo,
      { ...scaledDeadline(), url: `https://localhost:${port("valid")}/path` },
      { env },
    );
    expect(r).toMatchObject({
      url: `https://localhost:${port("valid")}/path`,
      address: "127.0.0.1",
      issuer: "RoadNerd Test CA",
      subject: "localhost",
      sans: SANS,
      expiry_days: 89,
      protocol: "TLSv1.3",
      cipher: "TLS_AES_256_GCM_SHA384",
      alpn: "http/1.1",
      chain: ["localhost", "RoadNerd Test CA"],
      chain_ok: true,
      chain_error: null,
      name_ok: true,
      name_error: null,
      trusted: true,
    });
    expect(r.error).toBeUndefined();
    expect(r.timing_ms.tls).toBeGreaterThan(0);
    expect(r.summary).toContain("trusted; issuer RoadNerd Test CA, expires in 89 d, TLSv1.3");
  });

  it("without the CA the same certificate's chain does not verify, and says why", async () => {
    const r = await callTool(
      server,
      tlsInfo,
      { ...scaledDeadline(), url: `https://127.0.0.1:${port("valid")}/` },
      {
        env: { OUTBOUND_ALLOW: "127.0.0.1" },
      },
    );
    expect(r).toMatchObject({
      chain_ok: false,
      chain_error: "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
      name_ok: true,
      trusted: false,
    });
  });

  it("an expired certificate is a result: negative days and CERT_HAS_EXPIRED", async () => {
    const r = await callTool(
      server,
      tlsInfo,
      { ...scaledDeadline(), url: `https://localhost:${port("expired")}/` },
      { env },
    );
    expect(r).toMatchObject({
      expiry_days: -1,
      chain_ok: false,
      chain_error: "CERT_HAS_EXPIRED",
      name_ok: true,
      trusted: false,
    });
    expect(r.summary).toContain("NOT trusted (CERT_HAS_EXPIRED)");
  });

  it("a self-signed certificate: the chain fails, the name still matches", async () => {
    const r = await callTool(
      server,
      tlsInfo,
      { ...scaledDeadline(), url: `https://localhost:${port("selfSigned")}/` },
      { env },
    );
    expect(r).toMatchObject({
      issuer: "localhost",
      chain: ["localhost"],
      chain_ok: false,
      chain_error: "DEPTH_ZERO_SELF_SIGNED_CERT",
      name_ok: true,
      trusted: false,
    });
  });

  it("a certificate for another name: the chain verifies, the name does not, and why", async () => {
    const r = await callTool(
      server,
      tlsInfo,
      { ...scaledDeadline(), url: `https://localhost:${port("wrongName")}/` },
      { env },
    );
    expect(r).toMatchObject({ sans: [WRONG_NAME], chain_ok: true, name_ok: false, trusted: false });
    expect(r.name_error).toContain(`DNS:${WRONG_NAME}`);
    expect(r.summary).toContain("NOT trusted (wrong name)");
  });

  it("a chain error does not hide a name error: both are reported", async () => {
    const r = await callTool(
      server,
      tlsInfo,
      { ...scaledDeadline(), url: `https://localhost:${port("wrongName")}/` },
      {
        env: { OUTBOUND_ALLOW: "127.0.0.1,localhost" },
      },
    );
    expect(r).toMatchObject({ chain_ok: false, chain_error: "UNABLE_TO_VERIFY_LEAF_SIGNATURE", name_ok: false });
    expect(r.summary).toContain("NOT trusted (UNABLE_TO_VERIFY_LEAF_SIGNATURE, wrong name)");
  });

  it("a port that does not speak TLS is E_TLS; a closed one E_CONN_REFUSED; a silent one E_TIMEOUT", async () => {
    const notTls = await callTool(
      server,
      tlsInfo,
      { ...scaledDeadline(), url: `https://127.0.0.1:${plain.port}/` },
      { env },
    );
    expect(notTls).toMatchObject({ error: "E_TLS", issuer: null, sans: [], trusted: false });
    const closed = await callTool(
      server,
      tlsInfo,
      { ...scaledDeadline(), url: `https://127.0.0.1:${CLOSED_PORT}/` },
      { env },
    );
    expect(closed).toMatchObject({ error: "E_CONN_REFUSED", address: null });
    const quiet = (silent.address() as AddressInfo).port;
    const slow = await callTool(
      server,
      tlsInfo,
      { ...scaledDeadline(), url: `https://127.0.0.1:${quiet}/`, timeout_ms: 300 },
      { env },
    );
    expect(slow).toMatchObject({ error: "E_TIMEOUT" });
  });

  it("refuses http:// URLs, targets outside OUTBOUND_ALLOW, and everything without it", async () => {
    await expect(
      callTool(server, tlsInfo, { ...scaledDeadline(), url: `http://127.0.0.1:${plain.port}/` }, { env }),
    ).rejects.toMatchObject({
      code: "E_INVALID_INPUT",
    });
    const before = servers.valid?.connections();
    await expect(
      callTool(server, tlsInfo, { ...scaledDeadline(), url: `https://127.0.0.2:${port("valid")}/` }, { env }),
    ).rejects.toMatchObject({ code: "E_FORBIDDEN" });
    await expect(
      callTool(server, tlsInfo, { ...scaledDeadline(), url: `https://127.0.0.1:${port("valid")}/` }),
    ).rejects.toMatchObject({
      code: "E_FORBIDDEN",
      message: expect.stringContaining("OUTBOUND_ALLOW"),
    });
    expect(servers.valid?.connections()).toBe(before);
  });

  it("a WEBCHECK_CA_FILE that is not a PEM is E_UNSUPPORTED naming it, before any connection", async () => {
    const before = servers.valid?.connections();
    const bad = { ...env, WEBCHECK_CA_FILE: "/proc/self/status" };
    await expect(
      callTool(server, tlsInfo, { ...scaledDeadline(), url: `https://127.0.0.1:${port("valid")}/` }, { env: bad }),
    ).rejects.toMatchObject({ code: "E_UNSUPPORTED", message: expect.stringContaining("/proc/self/status") });
    expect(servers.valid?.connections()).toBe(before);
  });
});
