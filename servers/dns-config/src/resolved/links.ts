/**
 * Per-link DNS servers as systemd 252 leaves them in /run: systemd-resolved's own state
 * (/run/systemd/resolve/netif/<ifindex>: SERVERS=, DOMAINS= — what NetworkManager or resolvectl set on a link)
 * and systemd-networkd's (/run/systemd/netif/links/<ifindex>: DNS=, DOMAINS=, ROUTE_DOMAINS=).
 */
import { listInRoot, readInRoot } from "../fs/read-bounded.ts";
import { serverAddresses } from "./server-address.ts";

export const RESOLVED_NETIF_DIR = "/run/systemd/resolve/netif";
export const NETWORKD_LINKS_DIR = "/run/systemd/netif/links";
/** A machine has a handful of links; a directory with more is not read further. */
const MAX_LINKS = 64;

export interface LinkDns {
  ifindex: number;
  name: string | null;
  servers: string[];
  domains: string[];
  source: "systemd-resolved" | "systemd-networkd";
}

/** KEY=VALUE lines of an env-style state file; later keys win. */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (m?.[1]) out[m[1]] = (m[2] ?? "").replace(/^"(.*)"$/, "$1");
  }
  return out;
}

const splitWords = (v: string | undefined) => (v ?? "").split(/\s+/).filter(Boolean);

async function readLinks(root: string, dir: string, source: LinkDns["source"]): Promise<LinkDns[]> {
  const names = (await listInRoot(root, dir, MAX_LINKS)).filter((n) => /^\d{1,9}$/.test(n));
  const links = await Promise.all(
    names.map(async (n): Promise<LinkDns | undefined> => {
      const file = await readInRoot(root, `${dir}/${n}`);
      if (file.text === undefined) return undefined;
      const env = parseEnvFile(file.text);
      const servers = serverAddresses(source === "systemd-resolved" ? (env.SERVERS ?? "") : (env.DNS ?? ""));
      const domains = [
        ...splitWords(env.DOMAINS),
        ...splitWords(env.ROUTE_DOMAINS).map((d) => (d.startsWith("~") ? d : `~${d}`)),
      ];
      if (servers.length === 0 && domains.length === 0) return undefined;
      return { ifindex: Number(n), name: null, servers, domains: [...new Set(domains)], source };
    }),
  );
  return links.filter((l): l is LinkDns => l !== undefined).sort((a, b) => a.ifindex - b.ifindex);
}

/** ifindex → interface name from the root's /sys/class/net (absent in a mounted image: names stay null). */
async function linkNames(root: string): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  const names = await listInRoot(root, "/sys/class/net", MAX_LINKS);
  await Promise.all(
    names.map(async (name) => {
      const f = await readInRoot(root, `/sys/class/net/${name}/ifindex`, 32);
      const idx = Number(f.text?.trim());
      if (Number.isInteger(idx) && idx > 0) out.set(idx, name);
    }),
  );
  return out;
}

export async function readLinkDns(root: string): Promise<LinkDns[]> {
  const [resolved, networkd] = await Promise.all([
    readLinks(root, RESOLVED_NETIF_DIR, "systemd-resolved"),
    readLinks(root, NETWORKD_LINKS_DIR, "systemd-networkd"),
  ]);
  const all = [...resolved, ...networkd];
  if (all.length === 0) return all;
  const names = await linkNames(root);
  return all.map((l) => ({ ...l, name: names.get(l.ifindex) ?? null }));
}
