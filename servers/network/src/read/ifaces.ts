/**
 * iface_info without a subprocess: the interfaces the kernel lists for this network namespace (/proc/net/dev),
 * each one's index, type, MAC, flags, carrier and operstate from /sys/class/net, and its addresses from
 * os.networkInterfaces() (getifaddrs: the same kernel order `ip -j addr` shows). Undefined — so the caller
 * runs `ip` — whenever these files cannot give exactly what `ip` would: a /sys mounted for another namespace,
 * or an interface whose addresses getifaddrs does not report (libuv lists only interfaces that are up and
 * running, so an IPv4 address on a link without carrier would be missed: /proc/net/fib_trie's local
 * addresses tell), or an interface that is down (its IPv4 addresses are in no table).
 */
import { readdirSync, readFileSync } from "node:fs";
import { networkInterfaces } from "node:os";
import type { IfaceRow } from "../parse/ip-addr.ts";

const IFF_UP = 0x1;
const ARPHRD_ETHER = 1;

// Synchronous: procfs and sysfs answer from memory in microseconds and never stall, where each await through
// libuv's thread pool cost ~0.1–1 ms on a busy machine (a dozen files per call).
const read = (path: string) => readFileSync(path, "utf8");
const text = (path: string) => read(path).trim();
function optional(path: string): string | undefined {
  try {
    return text(path);
  } catch {
    return undefined;
  }
}
const orEmpty = (path: string) => {
  try {
    return read(path);
  } catch {
    return "";
  }
};

/** Interface names of this network namespace (procfs follows the reader's namespace; sysfs its mount's). */
export function procNetDevNames(procNetDev: string): string[] {
  return procNetDev
    .split("\n")
    .slice(2)
    .map((l) => l.split(":")[0]?.trim() ?? "")
    .filter(Boolean);
}

/** IPv4 addresses the kernel holds as local (`/32 host LOCAL` in the local table): every address on an up link. */
export function fibLocalAddresses(fibTrie: string): Set<string> {
  const out = new Set<string>();
  let last = "";
  for (const line of fibTrie.split("\n")) {
    const leaf = /\|-- (\d+\.\d+\.\d+\.\d+)$/.exec(line.trimEnd());
    if (leaf?.[1]) last = leaf[1];
    else if (/\/32 host LOCAL/.test(line)) out.add(last);
  }
  return out;
}

export async function ifacesFromKernel(root = ""): Promise<IfaceRow[] | undefined> {
  const dev = read(`${root}/proc/net/dev`);
  const fib = orEmpty(`${root}/proc/net/fib_trie`);
  let sysNames: string[] = [];
  try {
    sysNames = readdirSync(`${root}/sys/class/net`);
  } catch {}
  const names = procNetDevNames(dev);
  // /sys mounted for another namespace (unshare -n without a remount): its interfaces are not ours.
  if (names.length !== sysNames.length || names.some((n) => !sysNames.includes(n))) return undefined;
  const addrs = networkInterfaces();
  // getifaddrs names an IPv4 address by its label (eth0:1): it belongs to eth0.
  const byIface = new Map<string, { ipv4: string[]; ipv6: string[] }>();
  for (const [label, list] of Object.entries(addrs)) {
    const name = names.includes(label) ? label : (label.split(":")[0] ?? label);
    const entry = byIface.get(name) ?? { ipv4: [], ipv6: [] };
    for (const a of list ?? []) (a.family === "IPv4" ? entry.ipv4 : entry.ipv6).push(a.cidr ?? a.address);
    byIface.set(name, entry);
  }
  const rows = names.map((name) => {
    const dir = `${root}/sys/class/net/${name}`;
    const index = text(`${dir}/ifindex`);
    const type = text(`${dir}/type`);
    const address = optional(`${dir}/address`);
    const flags = text(`${dir}/flags`);
    // EINVAL while the link is down: no carrier.
    const carrier = optional(`${dir}/carrier`);
    const operstate = optional(`${dir}/operstate`);
    const up = (Number.parseInt(flags, 16) & IFF_UP) !== 0;
    const found = byIface.get(name);
    return {
      index: Number(index),
      row: {
        name,
        mac: Number(type) === ARPHRD_ETHER && address ? address : null,
        ipv4: found?.ipv4 ?? [],
        ipv6: found?.ipv6 ?? [],
        up,
        carrier: up && carrier === "1",
        state: (operstate ?? "unknown").toUpperCase(),
      },
      listed: found !== undefined,
    };
  });
  // Every local IPv4 address must be one getifaddrs gave; an interface it skipped may hold others (down links).
  const seen = new Set(rows.flatMap((r) => r.row.ipv4.map((a) => a.split("/")[0])));
  if ([...fibLocalAddresses(fib)].some((a) => !seen.has(a))) return undefined;
  if (rows.some((r) => !r.listed && !r.row.up)) return undefined;
  // An up link without carrier that getifaddrs skipped may still hold IPv6 addresses: /proc/net/if_inet6 says.
  const inet6 = orEmpty(`${root}/proc/net/if_inet6`);
  const v6Names = new Set(
    inet6
      .split("\n")
      .map((l) => l.trim().split(/\s+/)[5])
      .filter(Boolean),
  );
  if (rows.some((r) => !r.listed && v6Names.has(r.row.name))) return undefined;
  return rows.sort((a, b) => a.index - b.index).map((r) => r.row);
}
