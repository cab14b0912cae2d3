/** uid → user name from /etc/passwd (no NSS lookup: LDAP users show as their uid). Re-read when it changes. */
import { readFileSync, statSync } from "node:fs";

let cache: { mtimeMs: number; names: Map<number, string> } | undefined;

export function parsePasswd(text: string): Map<number, string> {
  const names = new Map<number, string>();
  for (const line of text.split("\n")) {
    const [name, , uid] = line.split(":");
    if (name && uid && /^\d+$/.test(uid) && !names.has(Number(uid))) names.set(Number(uid), name);
  }
  return names;
}

export function userName(uid: number, path = "/etc/passwd"): string {
  try {
    const { mtimeMs } = statSync(path);
    if (cache?.mtimeMs !== mtimeMs) cache = { mtimeMs, names: parsePasswd(readFileSync(path, "utf8")) };
    return cache.names.get(uid) ?? String(uid);
  } catch {
    return String(uid);
  }
}
