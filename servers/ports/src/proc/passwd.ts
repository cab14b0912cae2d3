/**
 * uid → user name from /etc/passwd (no NSS lookup: LDAP users show as their uid). Re-read when it changes; the
 * parsed file is kept by the runtime (ctx.use(userNames)), not by the module.
 */
import { readFileSync, statSync } from "node:fs";
import { defineResource } from "../kit.ts";

export function parsePasswd(text: string): Map<number, string> {
  const names = new Map<number, string>();
  for (const line of text.split("\n")) {
    const [name, , uid] = line.split(":");
    if (name && uid && /^\d+$/.test(uid) && !names.has(Number(uid))) names.set(Number(uid), name);
  }
  return names;
}

/** The user name of a uid, or the uid itself when the file does not name it or cannot be read. */
export type UserName = (uid: number) => string;

export function createUserNames(path = "/etc/passwd"): UserName {
  let cache: { mtimeMs: number; names: Map<number, string> } | undefined;
  return (uid) => {
    try {
      const { mtimeMs } = statSync(path);
      if (cache?.mtimeMs !== mtimeMs) cache = { mtimeMs, names: parsePasswd(readFileSync(path, "utf8")) };
      return cache.names.get(uid) ?? String(uid);
    } catch {
      return String(uid);
    }
  };
}

export const userNames = defineResource({ name: "user names", create: () => createUserNames() });
