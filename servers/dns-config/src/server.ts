/** DnsConfig: the list of tools and streams (by hand: the list is the table of contents). */
import pkg from "../package.json" with { type: "json" };
import { defineServer } from "./kit.ts";
import { uptime } from "./tools/uptime.ts";

export const server = defineServer({
  package: pkg,
  instructions:
    "How this machine resolves names: resolv.conf's mode (systemd-resolved, resolvconf, NetworkManager, plain), the real upstream servers and search domains.",
  tools: [uptime],
  streams: [],
});
