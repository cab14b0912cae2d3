/**
 * The young generation grows to YOUNG_CAP_BYTES and no further (ADR 0071): the factor arithmetic, and a real V8
 * in a child process (flags are the whole process's, so never in the test's own), fed calls' worth of garbage
 * with survivors between turns of its event loop, shrunk by the trim's last-resort GC and fed again.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { growthFactor, YOUNG_CAP_BYTES } from "../../src/process/memory.ts";

const MiB = 1024 * 1024;

/** What youngSize read for young generations of 2, 4 and 8 MiB (Node 24 and 26): whole pages less their headers. */
const REPORTED = { 2: 2_097_024, 4: 4_194_048, 8: 8_388_096 } as const;

describe("growthFactor", () => {
  it("reaches the cap in one growth from a power of two below it, and holds at it", () => {
    expect(growthFactor(2 * MiB, 8 * MiB)).toBe(4);
    expect(growthFactor(4 * MiB, 8 * MiB)).toBe(2);
    expect(growthFactor(8 * MiB, 8 * MiB)).toBe(1);
    expect(growthFactor(32 * MiB, 8 * MiB)).toBe(1);
  });

  it("takes the size V8 reports (a little short of whole pages) as the whole pages it is", () => {
    expect(growthFactor(REPORTED[2])).toBe(4);
    expect(growthFactor(REPORTED[4])).toBe(2);
    expect(growthFactor(REPORTED[8])).toBe(1);
  });

  it("never grows past the cap: no growth where even a doubling would pass it", () => {
    expect(growthFactor(3 * MiB, 8 * MiB)).toBe(2);
    expect(growthFactor(5 * MiB, 8 * MiB)).toBe(1);
    expect(growthFactor(7 * MiB, 8 * MiB)).toBe(1);
    for (let size = 256 * 1024; size <= 16 * MiB; size += 256 * 1024) {
      const factor = growthFactor(size);
      if (factor > 1) expect(Math.ceil(size / (512 * 1024)) * 512 * 1024 * factor).toBeLessThanOrEqual(YOUNG_CAP_BYTES);
    }
  });

  it("holds a young generation of unknown size rather than let it grow to V8's maximum", () => {
    expect(growthFactor(0)).toBe(1);
    expect(growthFactor(-1)).toBe(1);
  });
});

/**
 * A child that feeds V8 garbage (a tenth of it kept a while, as calls in flight are) and prints the largest young
 * generation it saw (youngSize, read in the first turn after each scavenge), before and after a trim.
 */
const CHILD = `
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
const { holdYoungGeneration, youngSize } = await import(process.argv[2]);
const young = () => getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
const turn = () => new Promise((r) => setImmediate(r));
if (process.argv[3] === "hold") holdYoungGeneration();
let kept = [];
let largest = 0;
let used = 0;
async function feed(calls) {
  for (let c = 0; c < calls; c++) {
    for (let i = 0; i < 2000; i++) {
      const o = { i, s: "x".repeat(16) + i, a: [i, i + 1, i + 2] };
      if (i % 10 === 0) kept.push(o);
    }
    if (kept.length > 4000) kept = kept.slice(-2000);
    const y = young();
    if (y.space_used_size < used) largest = Math.max(largest, youngSize());
    used = y.space_used_size;
    await turn();
  }
}
await feed(3000);
const first = largest;
setFlagsFromString("--expose-gc");
runInNewContext("gc")({ type: "major", execution: "sync", flavor: "last-resort" });
const trimmed = youngSize();
largest = 0;
await feed(3000);
process.stdout.write(JSON.stringify({ first, trimmed, again: largest }));
`;

let dir: string;
let memoryModule: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rn-young-"));
  memoryModule = join(dir, "memory.mjs");
  await build({
    entryPoints: [join(import.meta.dirname, "../../src/process/memory.ts")],
    outfile: memoryModule,
    bundle: true,
    format: "esm",
    platform: "node",
    logLevel: "silent",
  });
  writeFileSync(join(dir, "child.mjs"), CHILD);
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function run(mode: "hold" | "free", nodeArgs: string[] = []): { first: number; trimmed: number; again: number } {
  const child = spawnSync(process.execPath, [...nodeArgs, join(dir, "child.mjs"), memoryModule, mode], {
    encoding: "utf8",
    timeout: 120_000,
  });
  expect(child.status, child.stderr).toBe(0);
  return JSON.parse(child.stdout);
}

describe("holdYoungGeneration, in a real V8", () => {
  it("lets the young generation grow to the cap under calls, not past it, and back to it after a trim", () => {
    const held = run("hold");
    // The cap as V8 reports it (whole pages less their headers), not a page past it.
    expect(held.first).toBeGreaterThan(YOUNG_CAP_BYTES - 4096);
    expect(held.first).toBeLessThanOrEqual(YOUNG_CAP_BYTES);
    // The trim's last-resort GC shrinks it (the memory it gives back), and the next calls grow it to the cap
    // again, not past it.
    expect(held.trimmed).toBeLessThan(YOUNG_CAP_BYTES / 2);
    expect(held.again).toBeGreaterThan(YOUNG_CAP_BYTES - 4096);
    expect(held.again).toBeLessThanOrEqual(YOUNG_CAP_BYTES);
  });

  it("holds one that starts at the cap (a server's start leaves it there) where it is", () => {
    const held = run("hold", ["--min-semi-space-size=4"]);
    expect(held.first).toBeGreaterThan(YOUNG_CAP_BYTES - 4096);
    expect(held.first).toBeLessThanOrEqual(YOUNG_CAP_BYTES);
  });

  it("without it, V8 grows the same process's young generation past the cap (what the hold prevents)", () => {
    const free = run("free");
    expect(free.first).toBeGreaterThan(YOUNG_CAP_BYTES * 2);
  });
});
