/**
 * OpenID Connect Discovery 1.0 rules for an issuer and the document it serves: the issuer is an https URL
 * without query or fragment; the document is at issuer (less a trailing /) + /.well-known/openid-configuration;
 * its `issuer` equals the one asked for exactly; the required metadata is present (token_endpoint unless the
 * provider is implicit-only). Microsoft's multi-tenant `{tenantid}` template and a trailing-slash difference
 * are warnings: common clients accept them with care, strict ones do not.
 */

export const WELL_KNOWN = "/.well-known/openid-configuration";

export const REQUIRED_METADATA = [
  "issuer",
  "authorization_endpoint",
  "jwks_uri",
  "response_types_supported",
  "subject_types_supported",
  "id_token_signing_alg_values_supported",
] as const;

export const ENDPOINT_KEYS = [
  "authorization_endpoint",
  "token_endpoint",
  "jwks_uri",
  "userinfo_endpoint",
  "end_session_endpoint",
] as const;

/** Problems with the issuer itself (empty: it may be fetched), and the discovery URL. */
export function issuerProblems(issuer: string): { problems: string[]; discoveryUrl: string | null } {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return { problems: ["the issuer is not a URL"], discoveryUrl: null };
  }
  const problems: string[] = [];
  if (url.protocol !== "https:") problems.push(`the issuer must use https, not ${url.protocol.slice(0, -1)}`);
  if (url.search !== "" || issuer.includes("?")) problems.push("the issuer must not have a query");
  if (url.hash !== "" || issuer.includes("#")) problems.push("the issuer must not have a fragment");
  const base = issuer.replace(/[?#].*$/, "").replace(/\/$/, "");
  return { problems, discoveryUrl: `${base}${WELL_KNOWN}` };
}

export interface DocumentVerdict {
  problems: string[];
  warnings: string[];
  endpoints: Partial<Record<(typeof ENDPOINT_KEYS)[number], string>>;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Judge a parsed discovery document against the issuer that was asked for. */
export function judgeDocument(requested: string, doc: unknown): DocumentVerdict {
  const problems: string[] = [];
  const warnings: string[] = [];
  const endpoints: DocumentVerdict["endpoints"] = {};
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    return { problems: ["the document is not a JSON object"], warnings, endpoints };
  }
  const d = doc as Record<string, unknown>;
  for (const key of REQUIRED_METADATA) {
    const v = d[key];
    const missing = v === undefined || v === null || v === "" || (Array.isArray(v) && v.length === 0);
    if (missing) problems.push(`required metadata missing: ${key}`);
  }
  const responseTypes = Array.isArray(d.response_types_supported) ? d.response_types_supported.map(String) : [];
  const implicitOnly = responseTypes.length > 0 && responseTypes.every((t) => !t.split(" ").includes("code"));
  if (d.token_endpoint === undefined && !implicitOnly) problems.push("required metadata missing: token_endpoint");

  const got = d.issuer;
  if (typeof got === "string" && got !== requested) {
    const template = got.includes("{tenantid}")
      ? new RegExp(`^${escapeRegExp(got).replace(escapeRegExp("{tenantid}"), "[^/]+")}$`)
      : null;
    if (template?.test(requested) || (template && /\/(common|organizations|consumers)(\/|$)/.test(requested))) {
      warnings.push(
        `issuer is Microsoft's multi-tenant template ${got}: tokens carry each tenant's own issuer, so validate it per tenant`,
      );
    } else if (got.replace(/\/$/, "") === requested.replace(/\/$/, "")) {
      warnings.push(
        `issuer differs only by a trailing slash: asked ${requested}, document says ${got}; strict clients refuse this`,
      );
    } else {
      problems.push(`issuer mismatch: asked ${requested}, document says ${got}`);
    }
  } else if (got !== undefined && typeof got !== "string") {
    problems.push("issuer is not a string");
  }

  for (const key of ENDPOINT_KEYS) {
    const v = d[key];
    if (typeof v !== "string") continue;
    endpoints[key] = v;
    if (!/^https:\/\//i.test(v)) warnings.push(`${key} is not https: ${v.slice(0, 120)}`);
  }
  return { problems, warnings, endpoints };
}
