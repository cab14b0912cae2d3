/**
 * The target of a proxied request is judged here, before anything is sent: the proxy resolves it, not us, so
 * the policy must decide first. A name OUTBOUND_ALLOW lists is judged by name; any other name is resolved here
 * and every address checked (a CIDR allowlist), and one that does not resolve here cannot be judged: refused.
 */
import { DiagError, portOf, type ToolContext } from "@roadnerd/conventions";
import type { ProxyConfig } from "./kit.ts";

/** Throws E_FORBIDDEN (naming OUTBOUND_ALLOW) unless the policy allows this URL's host and port. */
export async function judgeTarget(ctx: ToolContext<ProxyConfig>, url: URL, viaProxy: boolean): Promise<void> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  ctx.outbound.checkTarget(host, portOf(url));
  if (!viaProxy || ctx.outbound.allowsName(host)) return;
  try {
    await ctx.outbound.resolveTarget(host, ctx.signal, portOf(url));
  } catch (err) {
    if (err instanceof DiagError && err.code === "E_DNS_FAIL") {
      throw new DiagError(
        "E_FORBIDDEN",
        `cannot judge target ${host}: it does not resolve here and OUTBOUND_ALLOW does not name it`,
        {
          hint: `add ${host} to OUTBOUND_ALLOW`,
        },
      );
    }
    throw err;
  }
}

/** The proxy hop is a target like any other: OUTBOUND_ALLOW must name it (loopback included). */
export function judgeProxy(ctx: ToolContext<ProxyConfig>, host: string, port: number): void {
  ctx.outbound.checkTarget(host, port);
}
