/**
 * The CAs trusted for https targets, discovery documents and https proxies. Without PROXY_CA_FILE: Node's
 * defaults (its bundle plus NODE_EXTRA_CA_CERTS, read at start-up). With it: Node's bundle, that file and
 * NODE_EXTRA_CA_CERTS's file, so a corporate root can be added without restarting under another variable.
 */
import { readFileSync } from "node:fs";
import { createSecureContext, rootCertificates, type SecureContext } from "node:tls";
import { DiagError } from "@roadnerd/conventions";
import type { ProxyConfig } from "./kit.ts";

/** One TLS context per CA set: parsing ~150 root certificates per connection costs tens of milliseconds. */
const cache = new Map<string, SecureContext>();

function pem(path: string, variable: string): string {
  try {
    const text = readFileSync(path, "utf8");
    if (!text.includes("-----BEGIN CERTIFICATE-----")) throw new Error("no PEM certificate in it");
    return text;
  } catch (err) {
    throw new DiagError("E_UNSUPPORTED", `cannot use ${variable}=${path}: ${(err as Error).message}`, {
      hint: `point ${variable} at a PEM file of CA certificates`,
    });
  }
}

export function trustedContext(config: ProxyConfig, env: NodeJS.ProcessEnv = process.env): SecureContext | undefined {
  const file = config.PROXY_CA_FILE;
  if (!file) return undefined;
  const extra = env.NODE_EXTRA_CA_CERTS;
  const key = `${file}\n${extra ?? ""}`;
  let context = cache.get(key);
  if (!context) {
    const ca = [...rootCertificates, pem(file, "PROXY_CA_FILE"), ...(extra ? [pem(extra, "NODE_EXTRA_CA_CERTS")] : [])];
    context = createSecureContext({ ca });
    cache.set(key, context);
  }
  return context;
}
