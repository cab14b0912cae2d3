/** Proxy: the list of tools and streams (by hand: the list is the table of contents). */
import pkg from "../package.json" with { type: "json" };
import { defineServer } from "./kit.ts";
import { uptime } from "./tools/uptime.ts";

export const server = defineServer({
  package: pkg,
  instructions:
    "Proxies and corporate sign-on: which proxy each client uses, does it connect, where SSO redirects go, is OIDC discovery right.",
  tools: [uptime],
  streams: [],
});
