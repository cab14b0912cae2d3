/** Trees of files with known sizes for top_consumers tests. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const MIB = 1024 * 1024;

export function file(path: string, bytes: number): void {
  writeFileSync(path, Buffer.alloc(bytes, 1));
}

export function dirs(base: string, ...names: string[]): void {
  for (const n of names) mkdirSync(join(base, n), { recursive: true });
}

/** `dirCount` directories of `perDir` empty files each. */
export function manyFiles(base: string, dirCount: number, perDir: number): void {
  for (let d = 0; d < dirCount; d++) {
    const dir = join(base, `d${d}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < perDir; f++) writeFileSync(join(dir, `f${f}`), "");
  }
}

/** `du -B1 …` lines → [bytes, path]. */
export function parseDu(out: string): Array<[number, string]> {
  return out
    .trim()
    .split("\n")
    .map((l) => {
      const tab = l.indexOf("\t");
      return [Number(l.slice(0, tab)), l.slice(tab + 1)] as [number, string];
    });
}

export const mib = (bytes: number) => Math.round((bytes * 100) / MIB) / 100;
