/**
 * route_info: the default gateway and the main routing table, IPv4 and IPv6. From the kernel's files by default
 * (read/routes.ts: no process); `ip` (netlink) when those cannot say it exactly or the caller asks for `detail`:
 * the routes' protocol, an IPv4 multipath route's every nexthop with its weight (ADR 0033). The default gateway's
 * ARP entry comes from /proc/net/arp either way (read/neighbors.ts): whether it ever answered, with nothing sent.
 */
import { capList, command, type ExecResult, limitInput, truncationFields } from "@roadnerd/conventions";
import { z } from "zod";
import { defineTool } from "../kit.ts";
import { parseIpJson } from "../parse/ip-result.ts";
import { defaultGateway, parseIpRoute, type RouteRow } from "../parse/ip-route.ts";
import { NEIGHBOR_STATES } from "../parse/proc-arp.ts";
import { gatewayNeighbor } from "../read/neighbors.ts";
import { routesFromKernel } from "../read/routes.ts";

/** iproute2's JSON output of the main routing table, per family. */
export const ipRoutes = {
  4: command("ip", ["-j", "-4", "route", "show", "table", "main"]),
  6: command("ip", ["-j", "-6", "route", "show", "table", "main"]),
} as const;

const family = z.union([z.literal(4), z.literal(6)]).describe("IP version: 4 or 6");

const route = z.object({
  dst: z.string().describe('destination prefix, or "default"'),
  via: z.string().nullable().describe("next-hop gateway, null when on-link"),
  dev: z.string().nullable().describe("outgoing interface, null for blackhole/unreachable"),
  family,
  metric: z.number().int().min(0).describe("lower wins"),
  proto: z
    .string()
    .optional()
    .describe("who added it: kernel, boot (by hand), static, dhcp, ra… (only from ip: with detail: true)"),
  type: z.string().describe("unicast, or unreachable/blackhole/prohibit (traffic dropped)"),
  weight: z.number().int().min(1).optional().describe("share of a multipath route (one row per nexthop)"),
  linkdown: z.boolean().describe("the interface has no carrier: this route goes nowhere"),
});

const gateway = z
  .object({
    via: z.string().nullable().describe("gateway address, null for a point-to-point link"),
    dev: z.string().nullable().describe("interface towards it"),
    family,
    linkdown: z.boolean().describe("the interface has no carrier"),
    neighbor: z
      .enum(NEIGHBOR_STATES)
      .nullable()
      .describe(
        "the kernel's ARP entry for the gateway, read from /proc/net/arp (nothing sent): known (it answered), incomplete (asked, no answer yet or ever), none (no entry); after traffic off-link, incomplete or none means the gateway does not answer. null: an IPv6 or address-less gateway",
      ),
  })
  .nullable()
  .describe("lowest-metric IPv4 default route, else IPv6; null when there is none");

function rowsFrom(result: ExecResult, fam: 4 | 6): RouteRow[] {
  // A host without IPv6 (ipv6.disable=1) simply has no IPv6 routes.
  if (fam === 6 && result.exitCode !== 0) return [];
  return parseIpJson(result, `ip -${fam} route`, (json) => parseIpRoute(json, fam));
}

export const routeInfo = defineTool({
  name: "route_info",
  summary: "Default gateway and routes (IPv4/IPv6): is there a way out?",
  input: {
    limit: limitInput,
    detail: z
      .boolean()
      .optional()
      .describe(
        "true: ask netlink (runs ip) for each route's proto and every nexthop of a multipath route with its weight; default false reads the kernel's files",
      ),
  },
  output: { default_gateway: gateway, routes: z.array(route), ...truncationFields },
  example: {},
  commands: [ipRoutes[4], ipRoutes[6]],
  view: (r) => ({
    gateway: r.default_gateway?.via ?? null,
    dev: r.default_gateway?.dev,
    linkdown: r.default_gateway?.linkdown,
    neighbor: r.default_gateway?.neighbor,
  }),
  summarize: (r) => {
    const gw = r.default_gateway;
    const count = `${r.routes.length + r.omitted} routes`;
    if (!gw) return `no default route (IPv4 or IPv6): only local networks are reachable; ${count}`;
    const via = gw.via ? `via ${gw.via} ` : "";
    const down = gw.linkdown ? " but its link is down" : "";
    // No entry is what a gateway nothing was sent to yet looks like: only an unanswered ask is news.
    const unanswered = gw.neighbor === "incomplete" ? ", the gateway has not answered ARP (incomplete)" : "";
    return `default ${via}dev ${gw.dev ?? "?"} (IPv${gw.family})${down}${unanswered}; ${count}`;
  },
  async handler(input, ctx) {
    // The kernel's files answer in ~0.1 ms where `ip` costs two forks and execs.
    let rows = input.detail ? undefined : await routesFromKernel();
    if (!rows) {
      const [v4, v6] = await Promise.all([ctx.exec(ipRoutes[4]), ctx.exec(ipRoutes[6])]);
      rows = [...rowsFrom(v4, 4), ...rowsFrom(v6, 6)];
    }
    // Defaults first (stable sort) so a small `limit` never cuts the routes that matter most.
    rows.sort((a, b) => Number(b.dst === "default") - Number(a.dst === "default"));
    const { items, omitted } = capList(rows, input.limit);
    const gw = defaultGateway(rows);
    const default_gateway = gw && { ...gw, neighbor: await gatewayNeighbor(gw) };
    return { default_gateway, routes: items, truncated: omitted > 0, omitted };
  },
});
