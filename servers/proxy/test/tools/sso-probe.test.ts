/**
 * sso_probe over a chain of real web servers on loopback addresses (each its own "host"): the IdP named from
 * each Location before it is requested, and a hop outside the allowlist ended unrequested (the servers count
 * connections). Names of real IdPs appear only as Location strings that are never resolved.
 */
import type { ServerResponse } from "node:http";
import { callTool } from "@roadnerd/conventions/testing";
import { scaledDeadline, startTestServer, type TestServer } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { server } from "../../src/server.ts";
import { ssoProbe } from "../../src/tools/sso-probe.ts";

let app: TestServer;
let idp: TestServer;
let outside: TestServer;

const redirect = (res: ServerResponse, location: string, status = 302): void => {
  res.writeHead(status, { location }).end();
};

beforeAll(async () => {
  idp = await startTestServer(
    (_req, res) => {
      res.writeHead(200, { "content-type": "text/html" }).end("<form><input name=username></form>");
    },
    { host: "127.0.0.2" },
  );
  outside = await startTestServer((_req, res) => res.writeHead(200).end("outside"), { host: "127.0.0.9" });
  app = await startTestServer((req, res) => {
    const path = req.url ?? "/";
    const auth = `${idp.url}/realms/corp/protocol/openid-connect/auth?client_id=app&response_type=code&state=s1`;
    if (path === "/") return redirect(res, "/login");
    if (path === "/login") return redirect(res, auth);
    if (path === "/to-outside") return redirect(res, `${outside.url}/authorize?client_id=a&response_type=code`);
    if (path === "/to-entra") {
      return redirect(
        res,
        "https://login.microsoftonline.com/common/oauth2/v2.0/authorize?client_id=a&response_type=code",
      );
    }
    if (path === "/loop") return redirect(res, "/loop", 307);
    if (path === "/callback") return redirect(res, "/done?code=secret-code&state=s1");
    if (path === "/saml") {
      const form = `<form method="post" action="${idp.url}/idp/profile/SAML2/POST/SSO"><input type="hidden" name="SAMLRequest" value="PHNhbWw="></form>`;
      res.writeHead(200, { "content-type": "text/html" }).end(form);
      return;
    }
    if (path === "/to-metadata") return redirect(res, "http://169.254.169.254/latest/meta-data/");
    if (path === "/to-ftp") return redirect(res, "ftp://127.0.0.2/file");
    res.writeHead(200).end("app page");
  });
});
afterAll(async () => {
  for (const s of [app, idp, outside]) await s?.close();
});

const env = { env: { OUTBOUND_ALLOW: "127.0.0.1,127.0.0.2" } };

describe("sso_probe", () => {
  it("follows the chain to a Keycloak login page across hosts and names it", async () => {
    const r = await callTool(server, ssoProbe, { ...scaledDeadline(), url: `${app.url}/` }, env);
    expect(r.redirect_chain.map((h) => [h.status, h.host, h.idp])).toEqual([
      [302, "127.0.0.1", undefined],
      [302, "127.0.0.1", undefined],
      [200, "127.0.0.2", "Keycloak"],
    ]);
    expect(r).toMatchObject({ idp: "Keycloak", idp_host: "127.0.0.2", protocol: "oidc" });
    expect(r.stopped).toBeUndefined();
    expect(idp.requests).toContain(
      "GET /realms/corp/protocol/openid-connect/auth?client_id=app&response_type=code&state=s1",
    );
    expect(r.summary).toBe("3 response(s), identity provider Keycloak at 127.0.0.2");
  });

  it("ends the chain at a host outside the allowlist, naming it, without a connection", async () => {
    const r = await callTool(server, ssoProbe, { ...scaledDeadline(), url: `${app.url}/to-outside` }, env);
    expect(r.redirect_chain).toHaveLength(1);
    expect(r.stopped).toMatchObject({ host: "127.0.0.9", reason: expect.stringContaining("OUTBOUND_ALLOW") });
    expect(r).toMatchObject({ idp: "OIDC provider", idp_host: "127.0.0.9" });
    expect(outside.connections()).toBe(0);
  });

  it("names Microsoft Entra ID from the Location alone: the name is never looked up", async () => {
    const r = await callTool(server, ssoProbe, { ...scaledDeadline(), url: `${app.url}/to-entra` }, env);
    expect(r).toMatchObject({
      idp: "Microsoft Entra ID",
      idp_host: "login.microsoftonline.com",
      protocol: "oidc",
      stopped: {
        host: "login.microsoftonline.com",
        reason: expect.stringContaining("not in OUTBOUND_ALLOW (Microsoft Entra ID)"),
      },
    });
    expect(r.error).toBeUndefined();
  });

  it("names the IdP of a SAML POST-binding page and posts nothing", async () => {
    const before = idp.requests.length;
    const r = await callTool(server, ssoProbe, { ...scaledDeadline(), url: `${app.url}/saml` }, env);
    expect(r).toMatchObject({ idp: "Shibboleth", protocol: "saml", stopped: { host: "127.0.0.2" } });
    expect(idp.requests.length).toBe(before);
  });

  it("stops a redirect loop at max_hops, refuses metadata and non-http hops without a request", async () => {
    const loop = await callTool(server, ssoProbe, { ...scaledDeadline(), url: `${app.url}/loop`, max_hops: 3 }, env);
    expect(loop.redirect_chain).toHaveLength(4);
    expect(loop.stopped?.reason).toBe("stopped after 3 redirects");
    const meta = await callTool(server, ssoProbe, { ...scaledDeadline(), url: `${app.url}/to-metadata` }, env);
    expect(meta.stopped).toMatchObject({ host: "169.254.169.254", reason: expect.stringContaining("not followed") });
    const ftp = await callTool(server, ssoProbe, { ...scaledDeadline(), url: `${app.url}/to-ftp` }, env);
    expect(ftp.stopped?.reason).toBe("not followed: ftp: URL");
  });

  it("masks an authorization code in the chain", async () => {
    const r = await callTool(server, ssoProbe, { ...scaledDeadline(), url: `${app.url}/callback` }, env);
    expect(r.redirect_chain[1]?.url).toBe(`${app.url}/done?code=%5Bmasked%5D&state=s1`);
    expect(JSON.stringify(r)).not.toContain("secret-code");
  });

  it("a dead first hop is a diagnosis", async () => {
    const { CLOSED_PORT } = await import("@roadnerd/testkit");
    const r = await callTool(server, ssoProbe, { ...scaledDeadline(), url: `http://127.0.0.1:${CLOSED_PORT}/` }, env);
    expect(r).toMatchObject({ error: "E_CONN_REFUSED", redirect_chain: [] });
  });

  it("refuses everything without OUTBOUND_ALLOW, and a first hop outside it", async () => {
    const before = app.requests.length;
    await expect(callTool(server, ssoProbe, { ...scaledDeadline(), url: `${app.url}/` })).rejects.toMatchObject({
      code: "E_FORBIDDEN",
      message: expect.stringContaining("OUTBOUND_ALLOW"),
    });
    await expect(
      callTool(server, ssoProbe, { ...scaledDeadline(), url: `${outside.url}/` }, env),
    ).rejects.toMatchObject({
      code: "E_FORBIDDEN",
    });
    expect(app.requests.length).toBe(before);
    expect(outside.connections()).toBe(0);
  });

  it.each([
    [{}, "url"],
    [{ url: "javascript:alert(1)" }, "url"],
    [{ url: "http://127.0.0.1/", max_hops: 0 }, "max_hops"],
    [{ url: "http://127.0.0.1/", max_hops: 11 }, "max_hops"],
    [{ url: "http://127.0.0.1/", follow: true }, "valid keys"],
  ])("refuses bad input %j", async (input, text) => {
    await expect(callTool(server, ssoProbe, input, env)).rejects.toMatchObject({
      code: "E_INVALID_INPUT",
      message: expect.stringContaining(text),
    });
  });
});
