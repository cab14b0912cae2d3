/**
 * Regression (issue 18, finding 3): top_consumers raced out of STORAGE_ROOTS. A local user who can write in a
 * root (the default roots include /tmp) swaps a directory for a symlink to a place outside, back and forth, in
 * another process, while the walks run: once the path had been checked by string and then walked by string,
 * 32 listings in 449 calls came from outside. Walks of the swapped directory itself and of its parent must
 * never list an entry from outside, however the swaps fall.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnNodeChild } from "@roadnerd/conventions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChildFrame, type WalkChildFlush, walkChildMain } from "../../src/walk/child-main.ts";
import { scan } from "../../src/walk/scan.ts";
import { MIB } from "../helpers/trees.ts";

const CALLS = 300;
/** The racer's own bound: it stops by itself even if the test dies. */
const SWAPS = 500_000;

/** Directories swapped at once: each walk of the root meets them all. */
const VICTIMS = 8;
/** Same names inside and outside: a name listed inside but lstat'ed through the link leaks a size. */
const NAMES = 50;

// Renames are atomic: `v<i>` is the real directory or the symlink out, never missing for long.
const RACER = `
const { renameSync } = require("node:fs");
const [dir, victims, max] = process.argv.slice(1);
const all = (from, to) => {
  for (let i = 0; i < Number(victims); i++) try { renameSync(dir + "/" + from + i, dir + "/" + to + i); } catch {}
};
process.stdout.write("swapping\\n");
for (let n = 0; n < Number(max); n++) { all("real", "v"); all("v", "real"); all("link", "v"); all("v", "link"); }`;
/** Empty files beside the victims: time between a victim's lstat and its listing, as a big directory gives. */
const FILLER = 1000;

let base: string;
let root: string;
let racer: ChildProcess;

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), "rn-storage-race-"));
  root = join(base, "root");
  mkdirSync(root);
  mkdirSync(join(base, "outside"));
  // Outside: 1 MiB long each (sparse, no disk), so one of them counted shows in the apparent total.
  for (let f = 0; f < NAMES; f++) {
    writeFileSync(join(base, `outside/f${f}`), "");
    truncateSync(join(base, `outside/f${f}`), MIB);
  }
  writeFileSync(join(base, "outside/SECRET"), "");
  for (let f = 0; f < FILLER; f++) writeFileSync(join(root, `filler${f}`), "");
  for (let i = 0; i < VICTIMS; i++) {
    mkdirSync(join(root, `real${i}`), { recursive: true });
    for (let f = 0; f < NAMES; f++) writeFileSync(join(root, `real${i}/f${f}`), "mine");
    symlinkSync(join(base, "outside"), join(root, `link${i}`));
  }
  racer = spawn(process.execPath, ["-e", RACER, root, String(VICTIMS), String(SWAPS)], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  // The walks start once it swaps (a loaded machine starts a process slowly).
  return new Promise<void>((resolve, reject) => {
    racer.stdout?.once("data", () => resolve());
    racer.once("exit", () => reject(new Error("the racer exited before swapping")));
  });
});

afterAll(() => {
  if (racer.exitCode === null) racer.kill("SIGKILL");
  rmSync(base, { recursive: true, force: true });
});

const options = (path: string, depth: number) => ({
  path,
  roots: [root],
  depth,
  n: 20,
  oneFilesystem: true,
  deadline: performance.now() + 60_000,
  signal: new AbortController().signal,
});

/** CALLS walks of the swapped directories and their parent: how many listed something from outside. */
async function race(): Promise<{ leaks: number; inside: number }> {
  let leaks = 0;
  let inside = 0;
  for (let i = 0; i < CALLS && racer.exitCode === null; i++) {
    const target = i % 2 === 0 ? join(root, `v${i % VICTIMS}`) : root;
    const r = await scan(options(target, 2)).catch(() => undefined);
    if (!r) continue;
    // Everything inside is a few KiB long: a MiB means a size (or a listing) from outside.
    const names = r.entries.map((e) => e.name);
    if (names.some((n) => n.includes("SECRET")) || r.apparent >= MIB || !r.root.startsWith(root)) leaks += 1;
    if (r.files > 0) inside += 1;
  }
  return { leaks, inside };
}

describe("top_consumers against a directory swapped for a symlink while it is walked", () => {
  it(`lists nothing from outside the root in ${CALLS} walks`, async () => {
    const { leaks, inside } = await race();
    expect(leaks, `${leaks} walks listed entries from outside the root`).toBe(0);
    // The walks did reach the directory while it was there: the race was run, not dodged.
    expect(inside).toBeGreaterThan(0);
  });

  it(`a walker child lists nothing from outside in ${CALLS} directories handed to it while they are swapped`, async () => {
    // The child's part on its own (ADR 0059): each victim handed over with the device and inode its lstat saw
    // while it was the real directory, as the parent's listing does; the child must refuse it once swapped.
    const { child, end } = spawnNodeChild(`(${walkChildMain.toString()})()`);
    try {
      const flushes: WalkChildFlush[] = [];
      let heard: (() => void) | undefined;
      child.on("message", (m: WalkChildFlush) => {
        flushes.push(m);
        heard?.();
      });
      const job = { walk: 1, rootDev: lstatSync(root).dev, oneFilesystem: true, avoid: [], depth: 2, n: 1000 };
      child.send({ t: "walk", ...job });
      let handed = 0;
      // Bounded by attempts: a victim is a directory at a given moment only a quarter of the time.
      for (let i = 0; i < CALLS * 20 && handed < CALLS && racer.exitCode === null; i++) {
        const rel = `v${i % VICTIMS}`;
        const st = lstatSync(join(root, rel), { throwIfNoEntry: false });
        if (!st?.isDirectory()) {
          await new Promise((r) => setImmediate(r));
          continue;
        }
        handed += 1;
        const frame: ChildFrame = { path: join(root, rel), rel, depth: 1, dev: st.dev, ino: st.ino };
        const done = new Promise<void>((resolve) => {
          heard = () => {
            if (flushes.at(-1)?.pending === 0) resolve();
          };
        });
        child.send({ t: "frames", walk: 1, frames: [frame] });
        await done;
      }
      expect(handed).toBeGreaterThan(0);
      const listed = flushes.flatMap((f) => f.top.map(([name]) => name));
      const apparent = flushes.flatMap((f) => f.sums.map(([, , a]) => a)).reduce((k, a) => k + a, 0);
      expect(listed.filter((n) => !/^v\d+\/f\d+$/.test(n))).toEqual([]);
      // Everything inside is a few bytes long: a MiB is a size from outside.
      expect(apparent).toBeLessThan(MIB);
      // The race was run, not dodged: some victims were listed inside, some refused as swapped.
      expect(flushes.reduce((k, f) => k + f.dirs, 0)).toBeGreaterThan(0);
    } finally {
      end();
    }
  });
});
