/** DnsConfig: the list of tools (by hand: the list is the table of contents). */
import pkg from "../package.json" with { type: "json" };
import { defineServer } from "./kit.ts";
import { dnsConfigWatch } from "./streams/dns-config-watch.ts";
import { dnsConfigGet } from "./tools/dns-config-get.ts";
import { resolvedStatus } from "./tools/resolved-status.ts";

export const server = defineServer({
  package: pkg,
  instructions:
    "How this machine resolves names. dns_config_get: mode, manager, the servers that really answer, search, warnings. resolved_status: is systemd-resolved running, DNSSEC, fallback DNS. dns_config_watch: changes as they happen.",
  tools: [dnsConfigGet, resolvedStatus],
  streams: [dnsConfigWatch],
});
