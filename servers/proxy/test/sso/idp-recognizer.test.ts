/**
 * The recogniser's table against fixture URLs: strings only, never resolved or requested. The real IdP hosts
 * (Microsoft's, Google's, Okta's…) are what it must recognise; the file names none of them: their URLs are built
 * from the recogniser's own table (knownIdpHosts), the rest use reserved names (.example, .test). It also checks
 * that recognising them sends nothing: no DNS lookup, no socket, no fetch. And it runs only sealed, whatever the
 * run's settings (ROADNERD_UNSEALED skips the suite's own check, not this one): its process's network
 * namespace holds loopback alone, so no packet a mistake asked for could leave the machine.
 */
import dns from "node:dns";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it, type MockInstance, vi } from "vitest";
// @ts-expect-error plain .mjs helper
import { isSealed } from "../../../../scripts/lib/sealed-check.mjs";
import { knownIdpHosts, recognizeIdp, samlPostAction } from "../../src/sso/idp-recognizer.ts";

const reaches: MockInstance[] = [];
beforeAll(() => {
  expect(isSealed() as boolean, "a network namespace with loopback alone (scripts/sealed.mjs)").toBe(true);
  reaches.push(
    vi.spyOn(dns, "lookup"),
    vi.spyOn(dns.promises, "lookup"),
    vi.spyOn(net.Socket.prototype, "connect"),
    vi.spyOn(globalThis, "fetch"),
  );
});
afterAll(() => {
  const calls = reaches.map((spy) => spy.mock.calls.length);
  for (const spy of reaches) spy.mockRestore();
  expect(calls, "dns.lookup, dns.promises.lookup, socket connects, fetches").toEqual([0, 0, 0, 0]);
});

const OIDC = "client_id=app&response_type=code&redirect_uri=https%3A%2F%2Fapp.example%2Fcb";

/** The `index`th host of `idp`'s row in the recogniser's table; a suffix (".<domain>") gets `sub` in front. */
function idpHost(idp: string, index = 0, sub = "corp"): string {
  const host = knownIdpHosts(idp)[index];
  if (!host) throw new Error(`no host ${index} in the ${idp} row`);
  return host.startsWith(".") ? `${sub}${host}` : host;
}
/** Entra's rows: its main login host, the older one (WS-Fed), and its B2C suffix. */
const ENTRA = idpHost("Microsoft Entra ID", 0);

describe("recognizeIdp", () => {
  it.each([
    [`https://${ENTRA}/common/oauth2/v2.0/authorize?${OIDC}`, "Microsoft Entra ID", "oidc"],
    [`https://${ENTRA}/0000-tenant/saml2?SAMLRequest=fZJBb`, "Microsoft Entra ID", "saml"],
    [
      `https://${idpHost("Microsoft Entra ID", 4)}/common/wsfed?wa=wsignin1.0&wtrealm=x`,
      "Microsoft Entra ID",
      "ws-fed",
    ],
    [
      `https://${idpHost("Microsoft Entra ID", 7, "contoso")}/tenant/oauth2/v2.0/authorize?${OIDC}`,
      "Microsoft Entra ID",
      "oidc",
    ],
    [`https://${idpHost("Okta")}/oauth2/default/v1/authorize?${OIDC}`, "Okta", "oidc"],
    [`https://${idpHost("Okta")}/app/corp_app_1/exk1/sso/saml`, "Okta", "saml"],
    [`https://${idpHost("Google")}/o/oauth2/v2/auth?${OIDC}`, "Google", "oidc"],
    [`https://sso.corp.example/realms/corp/protocol/openid-connect/auth?${OIDC}`, "Keycloak", "oidc"],
    ["https://sso.corp.example/auth/realms/corp/protocol/saml?SAMLRequest=x", "Keycloak", "saml"],
    ["https://fs.corp.example/adfs/ls/?SAMLRequest=x", "AD FS", "saml"],
    [`https://fs.corp.example/adfs/oauth2/authorize?${OIDC}`, "AD FS", "oidc"],
    [`https://sso.corp.example/as/authorization.oauth2?${OIDC}`, "PingFederate", "oidc"],
    [`https://${idpHost("PingFederate", 1, "auth")}/env-1/saml20/idp/sso`, "PingFederate", "saml"],
    [`https://${idpHost("OneLogin")}/trust/saml2/http-redirect/sso/123?SAMLRequest=x`, "OneLogin", "saml"],
    [`https://${idpHost("Auth0", 0, "corp.eu")}/authorize?${OIDC}`, "Auth0", "oidc"],
    ["https://idp.uni.example/idp/profile/SAML2/Redirect/SSO?SAMLRequest=x", "Shibboleth", "saml"],
    ["https://idp.corp.test/sso?SAMLRequest=fZJBb&RelayState=x", "SAML IdP", "saml"],
    [`https://id.corp.test/oauth/authorize?${OIDC}`, "OIDC provider", "oidc"],
  ])("%s → %s (%s)", (url, idp, protocol) => {
    expect(recognizeIdp(url)).toEqual({ idp, protocol });
  });

  it.each([
    "https://app.example/",
    "https://app.example/authorize",
    "https://app.example/authorize?client_id=x",
    "https://notokta.com.example/oauth2",
    "https://okta.com.attacker.example/x",
    "https://app.example/adfs/lsx",
    "not a url",
  ])("%s is not an identity provider", (url) => {
    expect(recognizeIdp(url)).toBeNull();
  });
});

describe("samlPostAction", () => {
  const base = new URL("https://app.example/login");
  it("finds the form a SAML POST-binding page would submit", () => {
    const html = `<form method="post" action="https://idp.corp.test/idp/profile/SAML2/POST/SSO?a=1&amp;b=2"><input type="hidden" name="SAMLRequest" value="PHNhbWw="/></form>`;
    expect(samlPostAction(html, base)).toBe("https://idp.corp.test/idp/profile/SAML2/POST/SSO?a=1&b=2");
  });
  it("ignores forms without a SAMLRequest, and resolves relative actions", () => {
    expect(samlPostAction('<form action="/login"><input name="user"></form>', base)).toBeNull();
    expect(samlPostAction("<form action='/sso'><input name='SAMLRequest'></form>", base)).toBe(
      "https://app.example/sso",
    );
  });
});
