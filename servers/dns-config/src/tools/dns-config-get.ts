/** dns_config_get: how this machine resolves names — resolv.conf's mode and manager, the real servers, search. */
import { capList, limitInput, truncationFields } from "@roadnerd/conventions";
import { z } from "zod";
import { assertRoot } from "../fs/root-path.ts";
import { defineTool } from "../kit.ts";
import { readDnsConfig } from "../resolv/analyse.ts";

const ip = z.string().describe("IP address");
const nullablePath = (what: string) => z.string().nullable().describe(what);

const options = z
  .object({
    ndots: z.number().int().describe("dots a name needs before it is tried as is first (default 1, max 15)"),
    timeout: z.number().int().describe("seconds to wait for each server (default 5, max 30)"),
    attempts: z.number().int().describe("rounds over the servers (default 2, max 5)"),
    rotate: z.boolean().describe("spread queries over the servers instead of always asking the first"),
    edns0: z.boolean().describe("EDNS0 enabled"),
    trust_ad: z.boolean().describe("trust the AD (DNSSEC validated) bit from the servers"),
    single_request: z.boolean().describe("A and AAAA sent one after the other"),
    single_request_reopen: z.boolean().describe("a new socket for the second request"),
    use_vc: z.boolean().describe("TCP only"),
    no_tld_query: z.boolean().describe("never ask a bare single-label name as is"),
    no_aaaa: z.boolean().describe("AAAA lookups suppressed"),
  })
  .describe("the resolver options glibc ends up with (its defaults where the file says nothing)");

const link = z.object({
  ifindex: z.number().int().describe("interface index"),
  name: z.string().nullable().describe("interface name, null when the root has no /sys"),
  servers: z.array(ip).describe("DNS servers set on this link"),
  domains: z.array(z.string()).describe("search domains; ~domain = routing only"),
  source: z.enum(["systemd-resolved", "systemd-networkd"]).describe("whose state file said so"),
});

export const dnsConfigGet = defineTool({
  name: "dns_config_get",
  summary: "DNS setup (systemd-resolved, resolvconf…): real upstream servers, search domains.",
  input: { limit: limitInput },
  output: {
    mode: z
      .enum(["resolved", "resolvconf", "other"])
      .describe("who answers: systemd-resolved, resolvconf's file, or other"),
    servers: z
      .array(ip)
      .describe("servers that really answer: behind resolved's stub its upstream ones, else the first 3"),
    search: z.array(z.string()).describe("search domains glibc appends"),
    managed_by: z
      .enum(["systemd-resolved", "NetworkManager", "resolvconf", "dhclient", "dhcpcd", "none"])
      .describe("who writes resolv.conf; none = hand-written"),
    decided_by: z
      .enum(["path", "header", "none"])
      .describe("managed_by from the symlink's destination or the file's header"),
    file: z.string().describe("the file glibc reads"),
    points_to: nullablePath("where /etc/resolv.conf's symlink points, as written; null if not a symlink"),
    read: nullablePath("the file actually read, every symlink followed; null if none could be"),
    resolved_view: z
      .enum(["stub", "uplink", "static", "foreign"])
      .nullable()
      .describe("resolvectl's resolv.conf mode when resolved is involved; foreign = another file naming its stub"),
    nameservers: z.array(ip).describe("every nameserver line, as written"),
    stub: z.array(ip).describe("resolved stub addresses among them (127.0.0.53, 127.0.0.54)"),
    upstream: z.array(ip).describe("resolved's upstream servers"),
    upstream_from: nullablePath("where upstream came from"),
    links: z.array(link).describe("per-link DNS from systemd-resolved's and systemd-networkd's state"),
    options,
    options_raw: z.array(z.string()).describe("options words as written"),
    warnings: z.array(z.string()).describe("what is wrong or surprising"),
    ...truncationFields,
  },
  example: {},
  view: (r) => ({
    mode: r.mode,
    servers: r.servers,
    managed_by: r.managed_by,
    upstream: r.upstream.join() === r.servers.join() ? undefined : r.upstream,
    warnings: r.warnings.length ? r.warnings.slice(0, 2) : undefined,
  }),
  summarize: (r) => {
    const via = r.stub.length > 0 && r.mode === "resolved" ? ` via stub ${r.stub[0]}` : "";
    const servers = r.servers.length > 0 ? r.servers.join(", ") : "no servers";
    const search = r.search.length > 0 ? `; search ${r.search.join(" ")}` : "";
    const warn =
      r.warnings.length > 0
        ? `; ${r.warnings.length} warning${r.warnings.length === 1 ? "" : "s"}: ${r.warnings[0]}`
        : "";
    return `${r.mode} (${r.managed_by})${via}: ${servers}${search}${warn}`;
  },
  async handler(input, ctx) {
    const root = ctx.config.DNS_CONFIG_ROOT;
    await assertRoot(root);
    const r = await readDnsConfig(root, ctx.budget());
    let omitted = 0;
    const cap = <T>(list: T[]): T[] => {
      const c = capList(list, input.limit);
      omitted += c.omitted;
      return c.items;
    };
    return {
      ...r,
      servers: cap(r.servers),
      search: cap(r.search),
      nameservers: cap(r.nameservers),
      upstream: cap(r.upstream),
      links: cap(r.links),
      truncated: omitted > 0,
      omitted,
    };
  },
});
