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

/**
 * A timeout_ms that cuts a walk short on this machine as it is now: the walk is left a quarter of the time a
 * whole walk of the same tree just took (`wholeMs`, the fastest of a few warm ones), after the kernel's deadline
 * margin (100 ms) and top_consumers' answer margin (200 ms). A fixed timeout cannot do it: a quiet machine with
 * both cores for the walker children walks 100k files in less than a loaded one takes to start the call.
 */
export const cutShort = (wholeMs: number) => 300 + Math.ceil(wholeMs / 4);

/** The fastest of `times` runs of `run`, in ms. */
export async function fastest(times: number, run: () => Promise<unknown>): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < times; i++) {
    const t0 = performance.now();
    await run();
    best = Math.min(best, performance.now() - t0);
  }
  return best;
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
