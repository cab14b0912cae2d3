/**
 * What a spawned server inherits: only the config variables it declares (the kernel's base ones and its
 * own), from the orchestrator's environment. The address, port, token and log level are the attach
 * layer's; nothing else of the caller's shell reaches the child.
 */
import { baseEnvShape } from "@roadnerd/conventions/internal";

const OWNED_BY_ATTACH = new Set(["HOST", "PORT", "AUTH_TOKEN", "LOG_LEVEL", "ALLOW_UNAUTHENTICATED"]);

export function serverEnv(ownKeys: readonly string[], env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of [...Object.keys(baseEnvShape), ...ownKeys]) {
    const value = env[key];
    if (value !== undefined && !OWNED_BY_ATTACH.has(key)) out[key] = value;
  }
  // NODE_EXTRA_CA_CERTS: a test or corporate CA the server's TLS probes must trust.
  if (env.NODE_EXTRA_CA_CERTS) out.NODE_EXTRA_CA_CERTS = env.NODE_EXTRA_CA_CERTS;
  return out;
}
