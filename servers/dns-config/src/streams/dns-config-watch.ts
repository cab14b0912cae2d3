/**
 * dns_config_watch: the DNS configuration now, then again each time it changes (a VPN coming up, NetworkManager
 * rewriting resolv.conf, a link's DNS changing), for a bounded duration. It re-reads through dns_config_get each
 * interval rather than watching inodes: resolv.conf is replaced by rename, reached through symlinks and bind
 * mounts, and a read costs about a millisecond.
 */
import { z } from "zod";
import { defineStream } from "../kit.ts";
import { dnsConfigGet } from "../tools/dns-config-get.ts";

const DEFAULT_INTERVAL_MS = 1000;
const WATCHED = ["mode", "servers", "search", "managed_by", "read", "warnings"] as const;

export const dnsConfigWatch = defineStream({
  name: "dns_config_watch",
  summary: "The DNS mode, servers and search now, then once more each time they change.",
  input: {
    interval_ms: z
      .number()
      .int()
      .min(250)
      .max(60_000)
      .optional()
      .describe(`ms between reads (default ${DEFAULT_INTERVAL_MS})`),
  },
  message: {
    change: z.number().int().min(0).describe("0 for the first read, then 1, 2, 3… per change"),
    changed: z.array(z.enum(WATCHED)).describe("fields that differ from the previous message (all on the first)"),
    mode: z.enum(["resolved", "resolvconf", "other"]).describe("as dns_config_get"),
    servers: z.array(z.string()).describe("as dns_config_get"),
    search: z.array(z.string()).describe("as dns_config_get"),
    managed_by: z.string().describe("as dns_config_get"),
    read: z.string().nullable().describe("as dns_config_get"),
    warnings: z.array(z.string()).describe("as dns_config_get"),
  },
  example: { interval_ms: DEFAULT_INTERVAL_MS },
  summarize: (m) =>
    `${m.change === 0 ? "now" : `change ${m.change} (${m.changed.join(", ")})`}: ${m.mode} (${m.managed_by}) ${m.servers.join(", ") || "no servers"}`,
  async run(input, ctx) {
    const interval = input.interval_ms ?? DEFAULT_INTERVAL_MS;
    let last: Record<string, string> | undefined;
    let change = 0;
    // Bounded: the stream's duration ends it; the cap on reads is a second guard.
    for (let read = 0; read < 100_000; read++) {
      // A read cut short by the stream's own end (its duration, the client leaving) ends it quietly.
      const r = await ctx.call(dnsConfigGet, {}).catch((err: unknown) => {
        if (ctx.signal.aborted) return undefined;
        throw err;
      });
      if (!r || ctx.signal.aborted) return;
      const now = Object.fromEntries(WATCHED.map((k) => [k, JSON.stringify(r[k])]));
      const changed = WATCHED.filter((k) => last === undefined || last[k] !== now[k]);
      if (changed.length > 0) {
        const { mode, servers, search, managed_by, warnings } = r;
        if (last !== undefined) change += 1;
        last = now;
        if (!(await ctx.emit({ change, changed, mode, servers, search, managed_by, read: r.read, warnings }))) return;
      }
      if (!(await ctx.sleep(interval))) return;
    }
  },
});
