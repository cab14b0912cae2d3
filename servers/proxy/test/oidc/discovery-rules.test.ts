/** Discovery 1.0 rules on documents (no network): each rule failing on its own. */
import { describe, expect, it } from "vitest";
import { issuerProblems, judgeDocument } from "../../src/oidc/discovery-rules.ts";

const ISS = "https://sso.example/realms/corp";
const good = (over: Record<string, unknown> = {}) => ({
  issuer: ISS,
  authorization_endpoint: `${ISS}/protocol/openid-connect/auth`,
  token_endpoint: `${ISS}/protocol/openid-connect/token`,
  jwks_uri: `${ISS}/protocol/openid-connect/certs`,
  response_types_supported: ["code", "id_token", "code id_token"],
  subject_types_supported: ["public"],
  id_token_signing_alg_values_supported: ["RS256"],
  ...over,
});

describe("issuerProblems", () => {
  it.each([
    [ISS, [], `${ISS}/.well-known/openid-configuration`],
    [`${ISS}/`, [], `${ISS}/.well-known/openid-configuration`],
    ["https://sso.example", [], "https://sso.example/.well-known/openid-configuration"],
    [
      "http://sso.example",
      ["the issuer must use https, not http"],
      "http://sso.example/.well-known/openid-configuration",
    ],
    [
      "https://sso.example/?x=1",
      ["the issuer must not have a query"],
      "https://sso.example/.well-known/openid-configuration",
    ],
    [
      "https://sso.example/#f",
      ["the issuer must not have a fragment"],
      "https://sso.example/.well-known/openid-configuration",
    ],
  ])("%s", (issuer, problems, url) => {
    expect(issuerProblems(issuer)).toEqual({ problems, discoveryUrl: url });
  });
});

describe("judgeDocument", () => {
  it("accepts a complete document with the exact issuer", () => {
    const v = judgeDocument(ISS, good());
    expect(v.problems).toEqual([]);
    expect(v.warnings).toEqual([]);
    expect(v.endpoints.jwks_uri).toBe(`${ISS}/protocol/openid-connect/certs`);
  });
  it("fails an issuer mismatch", () => {
    expect(judgeDocument(ISS, good({ issuer: "https://other.example/realms/corp" })).problems).toEqual([
      `issuer mismatch: asked ${ISS}, document says https://other.example/realms/corp`,
    ]);
  });
  it("warns on a trailing-slash difference, either way", () => {
    expect(judgeDocument(ISS, good({ issuer: `${ISS}/` }))).toMatchObject({
      problems: [],
      warnings: [expect.stringContaining("trailing slash")],
    });
    expect(judgeDocument(`${ISS}/`, good())).toMatchObject({
      problems: [],
      warnings: [expect.stringContaining("trailing slash")],
    });
  });
  it("warns on Microsoft's {tenantid} template", () => {
    const ms = "https://login.microsoftonline.com/common/v2.0";
    const v = judgeDocument(ms, good({ issuer: "https://login.microsoftonline.com/{tenantid}/v2.0" }));
    expect(v).toMatchObject({ problems: [], warnings: [expect.stringContaining("{tenantid}")] });
    const other = judgeDocument(
      "https://sso.example/x",
      good({ issuer: "https://login.microsoftonline.com/{tenantid}/v2.0" }),
    );
    expect(other.problems).toEqual([expect.stringContaining("issuer mismatch")]);
  });
  it.each([
    "issuer",
    "authorization_endpoint",
    "jwks_uri",
    "response_types_supported",
    "subject_types_supported",
    "id_token_signing_alg_values_supported",
    "token_endpoint",
  ])("fails when %s is missing", (key) => {
    const doc = good();
    delete (doc as Record<string, unknown>)[key];
    expect(judgeDocument(ISS, doc).problems).toEqual([`required metadata missing: ${key}`]);
  });
  it("needs no token_endpoint for an implicit-only provider", () => {
    const doc = good({ response_types_supported: ["id_token", "id_token token"] });
    delete (doc as Record<string, unknown>).token_endpoint;
    expect(judgeDocument(ISS, doc).problems).toEqual([]);
  });
  it("refuses what is not an object, and warns on http endpoints", () => {
    expect(judgeDocument(ISS, [1]).problems).toEqual(["the document is not a JSON object"]);
    expect(judgeDocument(ISS, good({ userinfo_endpoint: "http://sso.example/userinfo" })).warnings).toEqual([
      "userinfo_endpoint is not https: http://sso.example/userinfo",
    ]);
  });
});
