/**
 * systemd-resolved's settings as systemd 252 reads them: /etc/systemd/resolved.conf, then drop-ins
 * (resolved.conf.d/*.conf from /etc, /run, /usr/local/lib, /usr/lib, /lib; a name in an earlier directory hides
 * the same name in a later one) in file-name order. In [Resolve], list settings (DNS=, FallbackDNS=, Domains=)
 * add up and an empty assignment clears them; the others take the last value.
 */
import { listInRoot, readInRoot } from "../fs/read-bounded.ts";

export const RESOLVED_CONF = "/etc/systemd/resolved.conf";
export const DROPIN_DIRS = [
  "/etc/systemd/resolved.conf.d",
  "/run/systemd/resolved.conf.d",
  "/usr/local/lib/systemd/resolved.conf.d",
  "/usr/lib/systemd/resolved.conf.d",
  "/lib/systemd/resolved.conf.d",
];
const LISTS = ["DNS", "FallbackDNS", "Domains"] as const;
type ListKey = (typeof LISTS)[number];

export interface ResolvedConf {
  /** Files read, in the order they apply (paths inside the root). */
  files: string[];
  /** The last value of each single-valued [Resolve] key that was set. */
  values: Record<string, string>;
  /** List keys that were assigned at all (even to empty), with the words they hold. */
  lists: Partial<Record<ListKey, string[]>>;
}

/** The drop-in files that apply, in order: one per name, the earliest directory winning. */
export async function dropIns(root: string): Promise<string[]> {
  const byName = new Map<string, string>();
  const listed = await Promise.all(DROPIN_DIRS.map((dir) => listInRoot(root, dir)));
  for (const [i, dir] of DROPIN_DIRS.entries()) {
    for (const name of listed[i] ?? []) {
      if (name.endsWith(".conf") && !byName.has(name)) byName.set(name, `${dir}/${name}`);
    }
  }
  return [...byName.keys()].sort().map((n) => byName.get(n) as string);
}

export function applyConf(conf: ResolvedConf, text: string): void {
  let section = "";
  // A trailing backslash continues the line (systemd's config parser joins them with a space).
  const lines = text.replace(/\\\r?\n/g, " ").split("\n");
  for (const raw of lines) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const sec = /^\[(.+)\]$/.exec(line);
    if (sec) {
      section = sec[1] ?? "";
      continue;
    }
    const eq = line.indexOf("=");
    if (section !== "Resolve" || eq < 1) continue;
    const key = line.slice(0, eq).trim();
    const value = line.slice(eq + 1).trim();
    if ((LISTS as readonly string[]).includes(key)) {
      const words = value.split(/\s+/).filter(Boolean);
      const k = key as ListKey;
      conf.lists[k] = words.length === 0 ? [] : [...(conf.lists[k] ?? []), ...words];
    } else {
      conf.values[key] = value;
    }
  }
}

export async function readResolvedConf(root: string): Promise<ResolvedConf> {
  const conf: ResolvedConf = { files: [], values: {}, lists: {} };
  const paths = [RESOLVED_CONF, ...(await dropIns(root))];
  // Read in parallel, applied in order.
  const files = await Promise.all(paths.map((p) => readInRoot(root, p)));
  for (const [i, path] of paths.entries()) {
    const file = files[i];
    if (file?.text === undefined) continue;
    conf.files.push(path);
    applyConf(conf, file.text);
  }
  return conf;
}
