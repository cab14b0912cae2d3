/**
 * What a spawned server inherits: only the config variables it declares (the kernel's base ones and its
 * own), from the orchestrator's environment. The address, port, token and log level are the attach
 * layer's; nothing else of the caller's shell reaches the child.
 */
import { baseEnvShape } from "@roadnerd/conventions/internal";
import { PROXY_VARIABLES } from "@roadnerd/proxy/tools/proxy-env-status";

const OWNED_BY_ATTACH = new Set(["HOST", "PORT", "AUTH_TOKEN", "LOG_LEVEL", "ALLOW_UNAUTHENTICATED"]);

/**
 * The user's proxy settings are a diagnosis input: the proxy server reports and follows the ones it was
 * started with (proxy_env_status, proxy_connectivity_test), so they reach every server as they are: the
 * variables proxy_env_status reads (PROXY_VARIABLES), one list.
 */
export function serverEnv(ownKeys: readonly string[], env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of [...Object.keys(baseEnvShape), ...ownKeys, ...PROXY_VARIABLES]) {
    const value = env[key];
    if (value !== undefined && !OWNED_BY_ATTACH.has(key)) out[key] = value;
  }
  // NODE_EXTRA_CA_CERTS: a test or corporate CA the server's TLS probes must trust.
  if (env.NODE_EXTRA_CA_CERTS) out.NODE_EXTRA_CA_CERTS = env.NODE_EXTRA_CA_CERTS;
  return out;
}
