/**
 * Which identity provider a URL belongs to, from the URL alone (host and path patterns, SAML and OIDC query
 * parameters), so a redirect can be named before — or instead of — being requested. Table-driven: the first
 * row that matches wins, specific products before the generic SAML and OIDC rows.
 */

export type SsoProtocol = "oidc" | "saml" | "ws-fed" | null;

export interface IdpMatch {
  /** Product name: "Microsoft Entra ID", "Okta", … or "SAML IdP" / "OIDC provider" for the generic rows. */
  idp: string;
  protocol: SsoProtocol;
}

interface Row {
  idp: string;
  /** Host suffixes (".okta.com") or exact hosts ("accounts.google.com"). */
  hosts?: readonly string[];
  /** Path patterns, matched against the path (case-insensitive). */
  paths?: readonly RegExp[];
  /** With hosts and paths both set, both must match. */
  both?: boolean;
}

const ROWS: readonly Row[] = [
  {
    idp: "Microsoft Entra ID",
    hosts: [
      "login.microsoftonline.com",
      "login.microsoftonline.us",
      "login.partner.microsoftonline.cn",
      "login.chinacloudapi.cn",
      "login.windows.net",
      "sts.windows.net",
      "login.live.com",
      ".b2clogin.com",
      ".ciamlogin.com",
    ],
  },
  { idp: "Okta", hosts: [".okta.com", ".oktapreview.com", ".okta-emea.com", ".okta-gov.com"] },
  { idp: "Google", hosts: ["accounts.google.com"] },
  { idp: "OneLogin", hosts: [".onelogin.com"] },
  { idp: "Auth0", hosts: [".auth0.com"] },
  {
    idp: "PingFederate",
    hosts: [".pingone.com", ".pingone.eu", ".pingone.asia", ".pingidentity.com"],
    paths: [/^\/as\/authorization\.oauth2$/i, /^\/idp\/sso\.saml2$/i, /^\/idp\/startsso\.ping$/i],
  },
  { idp: "AD FS", paths: [/^\/adfs\/ls\/?$/i, /^\/adfs\/oauth2\/authorize\/?$/i] },
  { idp: "Keycloak", paths: [/^(\/auth)?\/realms\/[^/]+\/protocol\/(openid-connect|saml)(\/auth)?\/?$/i] },
  { idp: "Shibboleth", paths: [/^\/idp\/profile\/(saml2|shibboleth|cas)\//i] },
];

/**
 * The hosts a product's row names: tests build their URLs from it, so no test file names a real IdP host (none
 * may be looked up from a test).
 */
export function knownIdpHosts(idp: string): readonly string[] {
  return ROWS.find((row) => row.idp === idp)?.hosts ?? [];
}

function hostMatches(host: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => (p.startsWith(".") ? host.endsWith(p) || host === p.slice(1) : host === p));
}

function protocolOf(url: URL): SsoProtocol {
  const q = url.searchParams;
  if (q.has("SAMLRequest") || q.has("SAMLResponse") || /saml/i.test(url.pathname)) return "saml";
  if (q.has("wa") && /^wsignin/i.test(q.get("wa") ?? "")) return "ws-fed";
  if (q.has("client_id") || q.has("response_type") || /oauth2|openid-connect|\/authorize/i.test(url.pathname)) {
    return "oidc";
  }
  return null;
}

/** The identity provider this URL belongs to, or null when nothing marks it as sign-on. */
export function recognizeIdp(raw: string | URL): IdpMatch | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  const protocol = protocolOf(url);
  for (const row of ROWS) {
    const byHost = row.hosts ? hostMatches(host, row.hosts) : false;
    const byPath = row.paths ? row.paths.some((p) => p.test(url.pathname)) : false;
    if (row.both ? byHost && byPath : byHost || byPath) return { idp: row.idp, protocol };
  }
  if (url.searchParams.has("SAMLRequest")) return { idp: "SAML IdP", protocol: "saml" };
  if (
    /\/authorize\/?$/i.test(url.pathname) &&
    url.searchParams.has("client_id") &&
    url.searchParams.has("response_type")
  ) {
    return { idp: "OIDC provider", protocol: "oidc" };
  }
  return null;
}

/** A SAML POST-binding page: the form's action, which a browser would post the SAMLRequest to. */
export function samlPostAction(html: string, base: URL): string | null {
  if (!/name=["']?SAMLRequest/i.test(html)) return null;
  const action = /<form[^>]*\baction=["']([^"']+)["']/i.exec(html)?.[1];
  if (!action) return null;
  try {
    return new URL(action.replace(/&amp;/g, "&"), base).href;
  } catch {
    return null;
  }
}
