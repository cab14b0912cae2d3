/** A process's state letter from /proc/<pid>/stat (R, S, D, T, t, Z…); undefined when it cannot be read (gone). */
import { readFileSync } from "node:fs";

export function procState(pid: number | undefined): string | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    // After the command name in parentheses, which may itself hold ") ".
    return stat[stat.lastIndexOf(")") + 2];
  } catch {
    return undefined;
  }
}
