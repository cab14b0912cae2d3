/**
 * The kernel's IPv4 neighbour (ARP) table as /proc/net/arp prints it: one row per entry, its flags saying
 * whether the link-layer address is known (ATF_COM: netlink's REACHABLE, STALE, DELAY, PROBE or PERMANENT) or
 * was asked for and not answered (flags 0x0: INCOMPLETE, or FAILED once the kernel gave up; the file does not
 * tell these two apart, nor REACHABLE from STALE). Reading it sends nothing.
 */

/** What the kernel holds for a neighbour: its address known, asked for without an answer, or no entry at all. */
export const NEIGHBOR_STATES = ["known", "incomplete", "none"] as const;
export type NeighborState = (typeof NEIGHBOR_STATES)[number];

const ATF_COM = 0x2;

/** The state of `address` on `dev` in /proc/net/arp's text. */
export function arpState(text: string, address: string, dev: string): NeighborState {
  for (const line of text.split("\n").slice(1)) {
    const [ip, , flags, , , device] = line.trim().split(/\s+/);
    if (ip !== address || device !== dev || flags === undefined) continue;
    return (Number.parseInt(flags, 16) & ATF_COM) !== 0 ? "known" : "incomplete";
  }
  return "none";
}
