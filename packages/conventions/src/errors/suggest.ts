/** "Did you mean": the closest names by edit distance, for E_UNKNOWN_TOOL hints. */
import { DiagError } from "./errors.ts";

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j] as number;
      row[j] = Math.min(cur + 1, (row[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length] as number;
}

export function closestNames(wanted: string, names: readonly string[], max = 3): string[] {
  const w = wanted.slice(0, 64).toLowerCase();
  return [...names]
    .map((name) => ({ name, d: distance(w, name) - (name.includes(w) || w.includes(name) ? 3 : 0) }))
    .sort((a, b) => a.d - b.d || a.name.localeCompare(b.name))
    .slice(0, max)
    .map((x) => x.name);
}

/** The one E_UNKNOWN_TOOL for every surface: the name asked (cut) and the closest real names. */
export function unknownTool(name: string, names: readonly string[], kind = "tool"): DiagError {
  return new DiagError("E_UNKNOWN_TOOL", `no ${kind} named ${name.slice(0, 64)}`, {
    hint: `closest: ${closestNames(name, names).join(", ")}`,
  });
}
