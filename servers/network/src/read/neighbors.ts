/**
 * The default gateway's neighbour state without sending anything: the kernel's IPv4 ARP table
 * (/proc/net/arp, which follows the reader's network namespace). Any traffic off-link (a DNS query to a
 * resolver past the gateway) makes the kernel ask for the gateway's link-layer address, so after such traffic an
 * entry that stays incomplete, or none at all, says the gateway itself does not answer. IPv6 neighbours are
 * only in netlink (no procfs table): null, as for a gateway without an address (point-to-point).
 */
import { readFile } from "node:fs/promises";
import { isIPv4 } from "node:net";
import { arpState, type NeighborState } from "../parse/proc-arp.ts";

export async function gatewayNeighbor(
  gw: { via: string | null; dev: string | null } | null,
  root = "",
): Promise<NeighborState | null> {
  if (!gw?.via || !gw.dev || !isIPv4(gw.via)) return null;
  const text = await readFile(`${root}/proc/net/arp`, "utf8").catch(() => undefined);
  return text === undefined ? null : arpState(text, gw.via, gw.dev);
}
