/**
 * tls_info: the certificate a server presents and whether a browser would accept it — issuer, names,
 * days to expiry, protocol and cipher, and separately whether the chain verifies and whether the name
 * matches, each with its reason. An expired, self-signed or wrong-name certificate is a result.
 */
import { X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createSecureContext, rootCertificates, type SecureContext } from "node:tls";
import { DIAGNOSIS_CODES, DiagError, httpUrlField, maskUrl, portOf, timingMsField } from "@roadnerd/conventions";
import { z } from "zod";
import { defineTool } from "../kit.ts";
import { tlsHandshake } from "../tls/handshake.ts";

/** Zod runs every refinement even after one failed, so this one must not throw on what the first refused. */
function isHttps(v: string): boolean {
  try {
    return new URL(v).protocol === "https:";
  } catch {
    return false;
  }
}

const httpsUrl = httpUrlField
  .refine(isHttps, "tls_info needs an https:// URL, e.g. https://example.com/")
  .describe("https:// URL whose certificate to read (its host and port; the path is ignored)");

/** The CA file is read, and the trust store built, once per path: it is config, not per-call input. */
const contexts = new Map<string, Promise<SecureContext>>();

function trustStore(path: string | undefined): Promise<SecureContext | undefined> {
  if (!path) return Promise.resolve(undefined);
  let context = contexts.get(path);
  if (!context) {
    context = readFile(path, "utf8")
      .then((pem) => {
        // OpenSSL skips what is not a certificate without a word: check there is one.
        new X509Certificate(pem);
        return createSecureContext({ ca: [...rootCertificates, pem] });
      })
      .catch((err: Error) => {
        contexts.delete(path);
        throw new DiagError("E_UNSUPPORTED", `WEBCHECK_CA_FILE ${path} is not a readable PEM file: ${err.message}`);
      });
    contexts.set(path, context);
  }
  return context;
}

export const tlsInfo = defineTool({
  name: "tls_info",
  summary: "An https URL's TLS certificate: issuer, names, expiry; does it verify, why not.",
  openWorld: true,
  targets: { url: "url" },
  input: { url: httpsUrl },
  output: {
    url: z.string().describe("the URL asked for (secrets masked)"),
    address: z.string().nullable().describe("the checked address connected to"),
    issuer: z.string().nullable().describe("issuer (CN, else O)"),
    subject: z.string().nullable().describe("subject (CN, else O)"),
    sans: z.array(z.string()).describe("names and IPs the certificate is valid for"),
    valid_to: z.string().nullable().describe("expiry, ISO 8601"),
    expiry_days: z.number().int().nullable().describe("whole days until expiry; negative = expired"),
    protocol: z.string().nullable().describe("TLS version, e.g. TLSv1.3"),
    cipher: z.string().nullable().describe("negotiated cipher suite"),
    alpn: z.string().nullable().describe("negotiated ALPN protocol: h2, http/1.1 or null"),
    chain: z.array(z.string()).describe("certificate subjects from the leaf up (to the trusted root when it verifies)"),
    chain_ok: z.boolean().describe("the chain verifies against the trusted CAs (expiry included)"),
    chain_error: z.string().nullable().describe("why not, e.g. CERT_HAS_EXPIRED, DEPTH_ZERO_SELF_SIGNED_CERT"),
    name_ok: z.boolean().describe("the certificate names the URL's host"),
    name_error: z.string().nullable().describe("why not: the names it does carry"),
    trusted: z.boolean().describe("chain_ok and name_ok: what a browser requires"),
    timing_ms: timingMsField.pick({ dns: true, connect: true, tls: true, total: true }).describe("phases in ms"),
    error: z.enum(DIAGNOSIS_CODES).optional().describe("diagnosis when no handshake completed"),
    detail: z.string().optional().describe("what failed and where"),
  },
  example: { url: "https://example.com/" },
  view: (r) => ({
    trusted: r.trusted,
    chain_error: r.chain_error,
    name_error: r.name_error,
    expiry_days: r.expiry_days,
    error: r.error,
  }),
  summarize: (r) => {
    if (r.error) return `${r.url} → ${r.error}: ${r.detail ?? ""}`;
    const verdict = r.trusted
      ? "trusted"
      : `NOT trusted (${[r.chain_error, r.name_ok ? null : "wrong name"].filter(Boolean).join(", ")})`;
    return `${r.url}: ${verdict}; issuer ${r.issuer ?? "?"}, expires in ${r.expiry_days} d, ${r.protocol} ${r.cipher}`;
  },
  async handler(input, ctx) {
    const url = new URL(input.url);
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const port = portOf(url);
    const result = await tlsHandshake(ctx.outbound, host, port, {
      signal: ctx.signal,
      timeoutMs: ctx.budget(),
      secureContext: await trustStore(ctx.config.WEBCHECK_CA_FILE),
    });
    const base = { url: maskUrl(input.url), timing_ms: result.timing };
    if (!result.ok) {
      return {
        ...base,
        address: null,
        issuer: null,
        subject: null,
        sans: [],
        valid_to: null,
        expiry_days: null,
        protocol: null,
        cipher: null,
        alpn: null,
        chain: [],
        chain_ok: false,
        chain_error: null,
        name_ok: false,
        name_error: null,
        trusted: false,
        error: result.code,
        detail: result.detail,
      };
    }
    const f = result.facts;
    return {
      ...base,
      address: f.address,
      issuer: f.cert.issuer,
      subject: f.cert.subject,
      sans: f.cert.sans,
      valid_to: f.cert.validTo,
      expiry_days: f.cert.expiryDays,
      protocol: f.protocol,
      cipher: f.cipher,
      alpn: f.alpn,
      chain: f.cert.chain,
      chain_ok: f.chainError === null,
      chain_error: f.chainError,
      name_ok: f.nameError === null,
      name_error: f.nameError,
      trusted: f.chainError === null && f.nameError === null,
    };
  },
});
