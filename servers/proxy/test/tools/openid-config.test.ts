/** openid_config against a real TLS server with a private CA (trusted through PROXY_CA_FILE). */
import type { ServerResponse } from "node:http";
import { callTool } from "@roadnerd/conventions/testing";
import {
  CLOSED_PORT,
  generateTestCerts,
  scaledDeadline,
  startTestServer,
  type TestCerts,
  type TestServer,
} from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { server } from "../../src/server.ts";
import { openidConfig } from "../../src/tools/openid-config.ts";

let certs: TestCerts;
let idp: TestServer;
let expired: TestServer;
let base: string;

function doc(issuer: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: `${issuer}/auth`,
    token_endpoint: `${issuer}/token`,
    jwks_uri: `${issuer}/certs`,
    response_types_supported: ["code"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: ["RS256"],
    ...over,
  };
}

const json = (res: ServerResponse, body: unknown, status = 200) =>
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));

beforeAll(async () => {
  certs = await generateTestCerts();
  const handler = (req: { url?: string }, res: ServerResponse) => {
    const realm = /^\/realms\/([a-z-]+)\/\.well-known\/openid-configuration$/.exec(req.url ?? "")?.[1];
    const iss = `${base}/realms/${realm}`;
    if (realm === "good") return json(res, doc(iss));
    if (realm === "mismatch") return json(res, doc(`${base}/realms/other`));
    if (realm === "slash") return json(res, doc(`${iss}/`));
    if (realm === "nojwks") return json(res, doc(iss, { jwks_uri: undefined }));
    if (realm === "html") return res.writeHead(200, { "content-type": "text/html" }).end("<html>login</html>");
    return json(res, { error: "not found" }, 404);
  };
  idp = await startTestServer(handler, { tls: certs.valid });
  expired = await startTestServer(handler, { tls: certs.expired });
  base = idp.url;
});
afterAll(async () => {
  await idp?.close();
  await expired?.close();
  await certs?.cleanup();
});

const env = () => ({ env: { OUTBOUND_ALLOW: "127.0.0.1", PROXY_CA_FILE: certs.caFile } });

describe("openid_config", () => {
  it("accepts a right document, served with a certificate the configured CA signed", async () => {
    const r = await callTool(server, openidConfig, { ...scaledDeadline(), issuer: `${base}/realms/good` }, env());
    expect(r).toMatchObject({
      ok: true,
      status: 200,
      tls_authorized: true,
      problems: [],
      warnings: [],
      discovery_url: `${base}/realms/good/.well-known/openid-configuration`,
      endpoints: { jwks_uri: `${base}/realms/good/certs`, token_endpoint: `${base}/realms/good/token` },
    });
    expect(idp.requests.at(-1)).toBe("GET /realms/good/.well-known/openid-configuration");
    expect(r.summary).toBe(`${base}/realms/good: discovery ok`);
  });

  it("fails an issuer mismatch and a missing field; warns on a trailing slash", async () => {
    const mismatch = await callTool(
      server,
      openidConfig,
      { ...scaledDeadline(), issuer: `${base}/realms/mismatch` },
      env(),
    );
    expect(mismatch).toMatchObject({ ok: false, problems: [expect.stringContaining("issuer mismatch")] });
    const missing = await callTool(
      server,
      openidConfig,
      { ...scaledDeadline(), issuer: `${base}/realms/nojwks` },
      env(),
    );
    expect(missing).toMatchObject({ ok: false, problems: ["required metadata missing: jwks_uri"] });
    const slash = await callTool(server, openidConfig, { ...scaledDeadline(), issuer: `${base}/realms/slash` }, env());
    expect(slash).toMatchObject({ ok: true, warnings: [expect.stringContaining("trailing slash")] });
  });

  it("fails a 404, an HTML page, an untrusted and an expired certificate", async () => {
    const gone = await callTool(server, openidConfig, { ...scaledDeadline(), issuer: `${base}/realms/gone` }, env());
    expect(gone).toMatchObject({ ok: false, status: 404, problems: ["discovery URL answered 404, not 200"] });
    const html = await callTool(server, openidConfig, { ...scaledDeadline(), issuer: `${base}/realms/html` }, env());
    expect(html).toMatchObject({ ok: false, problems: ["not JSON: <html>login</html>"] });
    const untrusted = await callTool(
      server,
      openidConfig,
      { ...scaledDeadline(), issuer: `${base}/realms/good` },
      { env: { OUTBOUND_ALLOW: "127.0.0.1" } },
    );
    expect(untrusted).toMatchObject({
      ok: false,
      tls_authorized: false,
      problems: [expect.stringContaining("certificate not trusted")],
    });
    const old = await callTool(
      server,
      openidConfig,
      { ...scaledDeadline(), issuer: `${expired.url}/realms/good` },
      env(),
    );
    expect(old.problems[0]).toMatch(/certificate not trusted \(CERT_HAS_EXPIRED\)/);
  });

  it("does not fetch an http issuer: the rule is the answer", async () => {
    const before = idp.requests.length;
    const r = await callTool(
      server,
      openidConfig,
      { ...scaledDeadline(), issuer: `http://127.0.0.1:${idp.port}/realms/good` },
      env(),
    );
    expect(r).toMatchObject({ ok: false, problems: ["the issuer must use https, not http"] });
    expect(idp.requests.length).toBe(before);
  });

  it("a refused port is a diagnosis", async () => {
    const r = await callTool(
      server,
      openidConfig,
      { ...scaledDeadline(), issuer: `https://127.0.0.1:${CLOSED_PORT}` },
      env(),
    );
    expect(r).toMatchObject({ ok: false, error: "E_CONN_REFUSED" });
  });

  it("refuses without OUTBOUND_ALLOW, and outside it, before any connection", async () => {
    const before = idp.connections();
    await expect(
      callTool(server, openidConfig, { ...scaledDeadline(), issuer: `${base}/realms/good` }),
    ).rejects.toMatchObject({
      code: "E_FORBIDDEN",
      message: expect.stringContaining("OUTBOUND_ALLOW"),
    });
    await expect(
      callTool(
        server,
        openidConfig,
        { ...scaledDeadline(), issuer: `${base}/realms/good` },
        { env: { OUTBOUND_ALLOW: "127.0.0.2" } },
      ),
    ).rejects.toMatchObject({ code: "E_FORBIDDEN" });
    await expect(
      callTool(server, openidConfig, { ...scaledDeadline(), issuer: "https://169.254.169.254/" }, env()),
    ).rejects.toMatchObject({
      code: "E_FORBIDDEN",
    });
    expect(idp.connections()).toBe(before);
  });

  it("refuses an unusable PROXY_CA_FILE with a clear error", async () => {
    await expect(
      callTool(
        server,
        openidConfig,
        { ...scaledDeadline(), issuer: `${base}/realms/good` },
        { env: { OUTBOUND_ALLOW: "127.0.0.1", PROXY_CA_FILE: "/nonexistent/ca.pem" } },
      ),
    ).rejects.toMatchObject({ code: "E_UNSUPPORTED", message: expect.stringContaining("PROXY_CA_FILE") });
  });

  it.each([
    [{}, "issuer"],
    [{ issuer: "sso.example" }, "issuer"],
    [{ issuer: "ldap://sso.example" }, "issuer"],
    [{ issuer: 42 }, "issuer"],
    [{ issuer: "https://sso.example", x: 1 }, "valid keys"],
  ])("refuses bad input %j", async (input, text) => {
    await expect(callTool(server, openidConfig, input, env())).rejects.toMatchObject({
      code: "E_INVALID_INPUT",
      message: expect.stringContaining(text),
    });
  });
});
