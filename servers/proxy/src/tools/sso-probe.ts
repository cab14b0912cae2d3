/**
 * sso_probe: follow an app's sign-on redirects by hand and name the identity provider. Each Location is
 * recognised before it is requested; a hop to a host the allowlist does not name ends the chain with that host
 * and the reason, unrequested (a redirect hop to a name is followed only when OUTBOUND_ALLOW names it, so an
 * outside IdP is not even looked up). Every request goes through the kernel's checked, pinned probe.
 */

import { isIP } from "node:net";
import {
  DIAGNOSIS_CODES,
  DiagError,
  httpRequest,
  httpUrlField,
  isRedirectStatus,
  portOf,
  shownUrl,
} from "@roadnerd/conventions";
import { z } from "zod";
import { defineTool } from "../kit.ts";
import { type IdpMatch, recognizeIdp, samlPostAction } from "../sso/idp-recognizer.ts";

export const DEFAULT_SSO_HOPS = 8;
export const MAX_SSO_HOPS = 10;
const BODY_BYTES = 16_384;

const hopShape = z.object({
  status: z.number().int(),
  host: z.string(),
  url: z.string().describe("masked, cut"),
  idp: z.string().optional().describe("the identity provider this hop belongs to"),
});

export const ssoProbe = defineTool({
  name: "sso_probe",
  summary: "Follow an app's sign-on redirects and name the identity provider (Entra ID, Okta…).",
  input: {
    url: httpUrlField.describe("the app's URL that should send you to sign-on, e.g. https://app.example/"),
    max_hops: z
      .number()
      .int()
      .min(1)
      .max(MAX_SSO_HOPS)
      .optional()
      .describe(`redirects to follow (default ${DEFAULT_SSO_HOPS})`),
  },
  output: {
    url: z.string(),
    redirect_chain: z.array(hopShape).describe("every response received, in order"),
    idp_host: z.string().optional().describe("the identity provider's host, named from a URL (requested or not)"),
    idp: z.string().optional().describe("the identity provider: Microsoft Entra ID, Okta, Google, Keycloak, AD FS…"),
    protocol: z.enum(["oidc", "saml", "ws-fed"]).optional(),
    stopped: z
      .object({ host: z.string(), url: z.string(), reason: z.string() })
      .optional()
      .describe("where the chain ended without a request, and why (allowlist, hop limit, SAML form)"),
    error: z
      .enum(DIAGNOSIS_CODES as [string, ...string[]])
      .optional()
      .describe("a hop that failed"),
    detail: z.string().optional(),
  },
  example: { url: "https://app.example/" },
  openWorld: true,
  targets: { url: "url" },
  view: (r) => ({
    idp: r.idp,
    idp_host: r.idp_host,
    protocol: r.protocol,
    hosts: [...new Set(r.redirect_chain.map((h) => h.host))],
    error: r.error,
  }),
  summarize: (r) => {
    const hops = `${r.redirect_chain.length} response(s)`;
    const idp = r.idp ? `identity provider ${r.idp} at ${r.idp_host}` : "no identity provider seen";
    const end = r.error
      ? `; failed: ${r.detail}`
      : r.stopped
        ? `; stopped at ${r.stopped.host}: ${r.stopped.reason}`
        : "";
    return `${hops}, ${idp}${end}`;
  },
  async handler(input, ctx) {
    ctx.outbound.checkTarget(new URL(input.url).hostname);
    const maxHops = input.max_hops ?? DEFAULT_SSO_HOPS;
    const chain: Array<z.infer<typeof hopShape>> = [];
    let seen: (IdpMatch & { host: string }) | undefined;
    const note = (url: URL) => {
      const match = recognizeIdp(url);
      if (match && !seen) seen = { ...match, host: url.hostname };
      return match;
    };
    const answer = (extra: Record<string, unknown>) => ({
      url: shownUrl(input.url),
      redirect_chain: chain,
      ...(seen ? { idp_host: seen.host, idp: seen.idp, ...(seen.protocol ? { protocol: seen.protocol } : {}) } : {}),
      ...extra,
    });
    const stop = (url: URL, reason: string) =>
      answer({ stopped: { host: url.hostname, url: shownUrl(url.href), reason } });

    let url = new URL(input.url);
    for (let hop = 0; ; hop++) {
      const match = note(url);
      if (hop > 0) {
        const host = url.hostname.replace(/^\[|\]$/g, "");
        // An unlisted name is not even resolved: the IdP is named from the URL, and nothing is sent.
        if (!isIP(host) && !ctx.outbound.allowsName(host)) {
          return stop(url, `not followed: ${host} is not in OUTBOUND_ALLOW${match ? ` (${match.idp})` : ""}`);
        }
        try {
          ctx.outbound.checkTarget(host, portOf(url));
        } catch (err) {
          if (err instanceof DiagError && err.code === "E_FORBIDDEN") return stop(url, `not followed: ${err.message}`);
          throw err;
        }
      }
      let result: Awaited<ReturnType<typeof httpRequest>>;
      try {
        result = await httpRequest(ctx.outbound, url, {
          signal: ctx.signal,
          timeoutMs: ctx.budget(),
          maxBodyBytes: BODY_BYTES,
          offerH2: false,
        });
      } catch (err) {
        if (hop > 0 && err instanceof DiagError && err.code === "E_FORBIDDEN") {
          return stop(url, `not followed: ${err.message}`);
        }
        throw err;
      }
      if (!result.ok) return answer({ error: result.failure.code, detail: result.failure.detail });
      const res = result.response;
      chain.push({
        status: res.status,
        host: url.hostname,
        url: shownUrl(url.href),
        ...(match ? { idp: match.idp } : {}),
      });
      if (isRedirectStatus(res.status) && res.redirectUrl) {
        const next = new URL(res.redirectUrl);
        if (next.protocol !== "http:" && next.protocol !== "https:") {
          return stop(next, `not followed: ${next.protocol} URL`);
        }
        if (hop + 1 > maxHops) {
          note(next);
          return stop(next, `stopped after ${maxHops} redirects`);
        }
        url = next;
        continue;
      }
      // SAML POST binding: the page posts a SAMLRequest to the IdP; we name it and post nothing.
      const action = res.status === 200 ? samlPostAction(res.body, url) : null;
      if (action) {
        const target = new URL(action);
        const m = recognizeIdp(target) ?? { idp: "SAML IdP", protocol: "saml" as const };
        if (!seen) seen = { ...m, host: target.hostname };
        return stop(target, "SAML POST binding: the form is not submitted");
      }
      return answer({});
    }
  },
});
