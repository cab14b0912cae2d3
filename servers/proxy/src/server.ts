/** Proxy: the list of tools (by hand: the list is the table of contents). */
import pkg from "../package.json" with { type: "json" };
import { defineServer } from "./kit.ts";
import { openidConfig } from "./tools/openid-config.ts";
import { proxyConnectivityTest } from "./tools/proxy-connectivity-test.ts";
import { proxyEnvStatus } from "./tools/proxy-env-status.ts";
import { ssoProbe } from "./tools/sso-probe.ts";

export const server = defineServer({
  package: pkg,
  // Someone else's infrastructure, or whatever a page links: nothing until OUTBOUND_ALLOW names it (0016).
  outbound: "allowlist-only",
  instructions:
    "Proxies and corporate sign-on: which proxy each client uses, does it connect, where SSO redirects go, is OIDC discovery right. Start with proxy_env_status. Targets must be listed in OUTBOUND_ALLOW.",
  tools: [proxyEnvStatus, proxyConnectivityTest, ssoProbe, openidConfig],
});
