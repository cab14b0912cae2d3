/** Parse `ip -j addr show` (iproute2 JSON) into iface_info rows. */

interface IpAddrJson {
  ifname?: string;
  flags?: string[];
  operstate?: string;
  address?: string;
  link_type?: string;
  addr_info?: Array<{ family?: string; local?: string; prefixlen?: number }>;
}

export interface IfaceRow {
  name: string;
  mac: string | null;
  ipv4: string[];
  ipv6: string[];
  up: boolean;
  carrier: boolean;
  state: string;
}

export function parseIpAddr(json: string): IfaceRow[] {
  const links = JSON.parse(json || "[]") as IpAddrJson[];
  return links
    .filter((l) => typeof l.ifname === "string")
    .map((l) => {
      const addrs = l.addr_info ?? [];
      const pick = (family: string) =>
        addrs
          .filter((a) => a.family === family && a.local)
          .map((a) => `${a.local}/${a.prefixlen ?? ""}`.replace(/\/$/, ""));
      const flags = l.flags ?? [];
      const mac = l.link_type === "ether" && l.address ? l.address : null;
      return {
        name: l.ifname as string,
        mac,
        ipv4: pick("inet"),
        ipv6: pick("inet6"),
        up: flags.includes("UP"),
        carrier: flags.includes("LOWER_UP"),
        state: l.operstate ?? "UNKNOWN",
      };
    });
}
