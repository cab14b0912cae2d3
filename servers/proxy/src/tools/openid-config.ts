/**
 * openid_config: fetch an issuer's OpenID Connect discovery document and judge it by Discovery 1.0 (https
 * issuer, exact issuer match, required metadata). The certificate must be trusted as a client would require
 * (Node's CAs, NODE_EXTRA_CA_CERTS, PROXY_CA_FILE). The issuer's host must be in OUTBOUND_ALLOW.
 */
import { cutText, DIAGNOSIS_CODES, shownUrl } from "@roadnerd/conventions";
import { z } from "zod";
import { defineTool } from "../kit.ts";
import { ENDPOINT_KEYS, issuerProblems, judgeDocument } from "../oidc/discovery-rules.ts";
import { proxiedRequest } from "../probe/proxied-request.ts";
import { judgeTarget } from "../target-policy.ts";
import { trustedContext } from "../trust.ts";

export const MAX_DOCUMENT_BYTES = 65_536;

const issuerField = z
  .string()
  .max(2048)
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === "https:" || u.protocol === "http:") && u.hostname !== "";
    } catch {
      return false;
    }
  }, "expected an issuer URL, e.g. https://login.example.com/realms/corp")
  .describe("the issuer, exactly as the app is configured with it, e.g. https://sso.example/realms/corp");

export const openidConfig = defineTool({
  name: "openid_config",
  summary: "Check an issuer's OpenID discovery document (https, issuer, fields).",
  input: { issuer: issuerField },
  output: {
    issuer: z.string(),
    ok: z.boolean().describe("the document is there, trusted, and follows OpenID Connect Discovery"),
    discovery_url: z.string().optional(),
    status: z.number().int().optional().describe("HTTP status of the discovery URL"),
    endpoints: z
      .object(
        Object.fromEntries(ENDPOINT_KEYS.map((k) => [k, z.string().optional()])) as Record<
          (typeof ENDPOINT_KEYS)[number],
          z.ZodOptional<z.ZodString>
        >,
      )
      .optional()
      .describe("the endpoints the document names (masked)"),
    problems: z.array(z.string()).describe("why it is not ok (Discovery rules a client enforces)"),
    warnings: z
      .array(z.string())
      .describe("accepted by some clients: {tenantid} template, trailing slash, http endpoints"),
    error: z
      .enum(DIAGNOSIS_CODES as [string, ...string[]])
      .optional()
      .describe("the fetch failed"),
    detail: z.string().optional(),
    tls_authorized: z.boolean().optional().describe("the certificate is trusted for this name"),
  },
  example: { issuer: "https://sso.example/realms/corp" },
  openWorld: true,
  targets: { issuer: "url" },
  view: (r) => ({
    ok: r.ok,
    status: r.status,
    problems: r.problems.length ? r.problems.slice(0, 2) : undefined,
    error: r.error,
    tls_authorized: r.tls_authorized,
  }),
  summarize: (r) => {
    if (r.error) return `${r.issuer}: discovery failed (${r.error}): ${r.detail ?? ""}`.trim();
    if (r.ok) return `${r.issuer}: discovery ok${r.warnings.length ? ` with ${r.warnings.length} warning(s)` : ""}`;
    return `${r.issuer}: discovery not ok: ${r.problems[0] ?? "unknown"}`;
  },
  async handler(input, ctx) {
    const shown = shownUrl(input.issuer);
    const { problems, discoveryUrl } = issuerProblems(input.issuer);
    const base = { issuer: shown, ...(discoveryUrl ? { discovery_url: shownUrl(discoveryUrl) } : {}) };
    // An issuer a client would refuse is not fetched: the rule is the answer.
    if (problems.length > 0 || !discoveryUrl) return { ...base, ok: false, problems, warnings: [] };
    const url = new URL(discoveryUrl);
    await judgeTarget(ctx, url, false);
    const r = await proxiedRequest({
      target: url,
      proxy: null,
      policy: ctx.outbound,
      signal: ctx.signal,
      timeoutMs: ctx.budget(),
      secureContext: trustedContext(ctx.config),
      maxBodyBytes: MAX_DOCUMENT_BYTES,
      accept: "application/json",
    });
    if (!r.ok) return { ...base, ok: false, problems: [], warnings: [], error: r.code, detail: r.detail };
    const out = { ...base, status: r.status, tls_authorized: r.tls?.authorized ?? false };
    const found: string[] = [];
    if (r.tls && !r.tls.authorized) {
      found.push(
        `certificate not trusted (${r.tls.authorization_error}): add the CA with PROXY_CA_FILE or NODE_EXTRA_CA_CERTS`,
      );
    }
    if (r.status !== 200)
      return { ...out, ok: false, problems: [...found, `discovery URL answered ${r.status}, not 200`], warnings: [] };
    if (!r.bodyComplete) found.push(`the document is larger than ${MAX_DOCUMENT_BYTES} bytes`);
    let doc: unknown;
    try {
      doc = JSON.parse(r.body);
    } catch {
      return {
        ...out,
        ok: false,
        problems: [...found, `not JSON: ${cutText(r.body.replace(/\s+/g, " "), 60)}`],
        warnings: [],
      };
    }
    const verdict = judgeDocument(input.issuer, doc);
    const endpoints = Object.fromEntries(Object.entries(verdict.endpoints).map(([k, v]) => [k, shownUrl(v)]));
    const all = [...found, ...verdict.problems];
    return { ...out, ok: all.length === 0, endpoints, problems: all, warnings: verdict.warnings };
  },
});
