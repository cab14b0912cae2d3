/**
 * Did the default gateway itself answer? After a failed DNS query the kernel's ARP entry for the gateway
 * (route_info's `default_gateway.neighbor`, read from /proc/net/arp, nothing sent) tells a dead gateway from a
 * dead resolver: a query to a resolver past the gateway makes the kernel ask for the gateway's link-layer
 * address, so an entry still incomplete, or none at all, means nothing answered at the gateway's address.
 */
import { BlockList, isIPv4 } from "node:net";
import type { ResultOf } from "@roadnerd/conventions";
import type { routeInfo } from "@roadnerd/network/tools/route-info";
import type { StepRecord } from "./planner.ts";

type Route = ResultOf<typeof routeInfo>;

/** Index of the last step calling `tool` (-1 if none). */
const lastIndex = (history: readonly StepRecord[], tool: string) => history.findLastIndex((s) => s.tool === tool);

/** Whether the latest `later` call came after the latest `earlier` one. */
export const readAfter = (history: readonly StepRecord[], later: string, earlier: string): boolean =>
  lastIndex(history, later) > lastIndex(history, earlier);

/** Whether the IPv4 route destination `dst` ("10.0.0.0/8", "10.0.0.5") covers `address`: Node's BlockList, as the kernel's outbound policy matches CIDRs. */
function covers(dst: string, address: string): boolean {
  const [net = "", len = "32"] = dst.split("/");
  const bits = Number(len);
  if (!isIPv4(net) || !Number.isInteger(bits) || bits < 0 || bits > 32) return false;
  const list = new BlockList();
  list.addSubnet(net, bits, "ipv4");
  return list.check(address, "ipv4");
}

/**
 * The resolver is reached through the default gateway: an IPv4 address no listed route but the default covers
 * (not on a local network, not behind another gateway, not loopback). Unknown (false) when the list was cut.
 */
export function viaDefaultGateway(route: Route, resolver: string): boolean {
  if (!isIPv4(resolver) || route.truncated || resolver.startsWith("127.")) return false;
  return !route.routes.some((r) => r.family === 4 && r.dst !== "default" && covers(r.dst, resolver));
}

/**
 * Why the gateway does not answer, or undefined when nothing says so: an incomplete entry always (the kernel
 * asked and got nothing), no entry only when read after a query that had to go through the gateway.
 */
export function gatewaySilence(route: Route, afterQuery: boolean, resolver: string): string | undefined {
  const neighbor = route.default_gateway?.neighbor;
  if (neighbor === "incomplete") return "no link-layer address: ARP incomplete";
  if (neighbor === "none" && afterQuery && viaDefaultGateway(route, resolver)) {
    return `no link-layer address: no ARP entry after a DNS query to ${resolver} through it`;
  }
  return undefined;
}
