/**
 * This server reaches nothing until OUTBOUND_ALLOW names it: a proxy or an identity provider is someone
 * else's infrastructure, so the kernel's default (everything but metadata) is too open here. Loopback is not
 * exempt: a local port may be anything, and a local proxy agent (cntlm, px) is one more entry.
 */
import { DiagError } from "@roadnerd/conventions";
import type { ProxyConfig } from "./kit.ts";

export const ALLOW_VAR = "OUTBOUND_ALLOW";

/** Throw E_FORBIDDEN naming the variable when no allowlist is configured. */
export function requireAllowlist(config: ProxyConfig, what: string): void {
  if (config.OUTBOUND_ALLOW.length > 0) return;
  throw new DiagError("E_FORBIDDEN", `the proxy server reaches no target until ${ALLOW_VAR} names it: ${what}`, {
    hint: `start the server with ${ALLOW_VAR}=<host or CIDR>[,…], e.g. ${ALLOW_VAR}=proxy.corp,intranet.corp,127.0.0.1`,
  });
}

/** True when OUTBOUND_ALLOW lists this name (exactly or by *.suffix): it may be judged without a local lookup. */
export function allowsName(config: ProxyConfig, host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  return config.OUTBOUND_ALLOW.some((raw) => {
    const n = raw.trim().toLowerCase().replace(/\.$/, "");
    return n.startsWith("*.") ? h.endsWith(n.slice(1)) : h === n;
  });
}
