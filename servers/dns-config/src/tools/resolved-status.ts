/**
 * resolved_status: is systemd-resolved running, and its DNSSEC and fallback DNS settings — from its varlink
 * socket and its config files, no binary and no privileges (resolvectl is often absent; D-Bus may be too).
 */
import { z } from "zod";
import { assertRoot } from "../fs/root-path.ts";
import { defineTool } from "../kit.ts";
import { readResolvedConf } from "../resolved/conf.ts";
import { resolvedRunning } from "../resolved/running.ts";

const setting = (what: string) =>
  z.string().optional().describe(`${what}; absent when no file sets it (built-in default)`);

export const resolvedStatus = defineTool({
  name: "resolved_status",
  summary: "Is systemd-resolved running; its DNSSEC, fallback and global DNS settings.",
  input: {},
  output: {
    running: z.boolean().describe("systemd-resolved is running"),
    evidence: z.string().describe("what decided running"),
    installed: z.boolean().describe("its daemon binary is present"),
    binary: z.string().nullable().describe("the binary found, null if none"),
    dnssec: setting("DNSSEC= (yes, no, allow-downgrade)"),
    fallback_dns: z
      .array(z.string())
      .optional()
      .describe("FallbackDNS= servers; absent when no file sets it (built-in list), [] when set empty"),
    dns: z.array(z.string()).describe("global DNS= servers from the config files"),
    domains: z.array(z.string()).describe("global Domains= from the config files"),
    dns_over_tls: setting("DNSOverTLS="),
    dns_stub_listener: setting("DNSStubListener="),
    llmnr: setting("LLMNR="),
    multicast_dns: setting("MulticastDNS="),
    config_files: z.array(z.string()).describe("files read, in the order they apply (later wins)"),
    source: z.literal("files").describe("settings come from the config files, not the running daemon"),
  },
  example: {},
  view: (r) => ({
    running: r.running,
    dns: r.dns.length ? r.dns : undefined,
    domains: r.domains.length ? r.domains : undefined,
    stub_listener: r.dns_stub_listener,
  }),
  summarize: (r) => {
    const state = r.running ? "running" : r.installed ? "installed, not running" : "not installed, not running";
    const dnssec = r.dnssec ? `DNSSEC=${r.dnssec}` : "DNSSEC default";
    const fallback = r.fallback_dns ? `FallbackDNS=${r.fallback_dns.join(" ") || "(none)"}` : "FallbackDNS default";
    return `systemd-resolved ${state}; ${dnssec}; ${fallback}; ${r.config_files.length} config file(s)`;
  },
  async handler(_input, ctx) {
    const root = ctx.config.DNS_CONFIG_ROOT;
    await assertRoot(root);
    const [run, conf] = await Promise.all([resolvedRunning(root, ctx.budget()), readResolvedConf(root)]);
    const v = conf.values;
    return {
      running: run.running,
      evidence: run.evidence,
      installed: run.installed,
      binary: run.binary,
      ...(v.DNSSEC !== undefined ? { dnssec: v.DNSSEC } : {}),
      ...(conf.lists.FallbackDNS ? { fallback_dns: conf.lists.FallbackDNS } : {}),
      dns: conf.lists.DNS ?? [],
      domains: conf.lists.Domains ?? [],
      ...(v.DNSOverTLS !== undefined ? { dns_over_tls: v.DNSOverTLS } : {}),
      ...(v.DNSStubListener !== undefined ? { dns_stub_listener: v.DNSStubListener } : {}),
      ...(v.LLMNR !== undefined ? { llmnr: v.LLMNR } : {}),
      ...(v.MulticastDNS !== undefined ? { multicast_dns: v.MulticastDNS } : {}),
      config_files: conf.files,
      source: "files" as const,
    };
  },
});
