/**
 * Regression (issue 18, finding 3): dns-config raced out of DNS_CONFIG_ROOT. Each component was checked with
 * lstat and the file then opened by its path string, where O_NOFOLLOW guards only the last component: a
 * directory swapped for a symlink to the host in between made 46 reads in 364 come from outside the root.
 * Reads and listings inside the root, with another process swapping /etc for a symlink out, never return a
 * byte or a name from outside.
 */
import type { ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listInRoot, readInRoot } from "../../src/fs/read-bounded.ts";
import { startSwapRacer } from "../helpers/races.ts";

const READS = 600;
/**
 * The reads are synchronous and take microseconds: on a loaded machine the racer may not be scheduled once in
 * READS tries. The loop goes on (by count, not by clock) until it has seen both states of `etc`.
 */
const MAX_TRIES = 500_000;
let base: string;
let root: string;
let racer: ChildProcess;

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), "rn-dns-race-"));
  root = join(base, "root");
  mkdirSync(join(root, "etc.real"), { recursive: true });
  writeFileSync(join(root, "etc.real/resolv.conf"), "nameserver 192.0.2.53\n");
  mkdirSync(join(base, "host-etc"));
  writeFileSync(join(base, "host-etc/resolv.conf"), "nameserver 203.0.113.66 # SECRET\n");
  writeFileSync(join(base, "host-etc/SECRET-name"), "");
  // A host path, not one inside the root: only a string open by the kernel would follow it there.
  symlinkSync(join(base, "host-etc"), join(root, "etc.link"));
  racer = await startSwapRacer(root, "etc");
});

afterAll(() => {
  if (racer.exitCode === null) racer.kill("SIGKILL");
  rmSync(base, { recursive: true, force: true });
});

describe("reads inside DNS_CONFIG_ROOT while /etc is swapped for a symlink out", () => {
  it(`never read or list anything from outside in ${READS} tries or more`, async () => {
    let leaks = 0;
    let inside = 0;
    let away = 0;
    const enough = (i: number) => i >= READS && inside > 0 && away > 0;
    for (let i = 0; i < MAX_TRIES && !enough(i) && racer.exitCode === null; i++) {
      if (i % 2 === 0) {
        const r = await readInRoot(root, "/etc/resolv.conf");
        if (r.text?.includes("SECRET")) leaks += 1;
        if (r.text?.includes("192.0.2.53")) inside += 1;
        else away += 1;
        // Give the racer a turn now and then: on one busy core it would otherwise wait for the whole loop.
        if (i % 64 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
      } else {
        const names = await listInRoot(root, "/etc");
        if (names.some((n) => n.includes("SECRET"))) leaks += 1;
      }
    }
    expect(leaks, `${leaks} reads or listings came from outside the root`).toBe(0);
    // The reads found the root's own file while it was there and missed it while it was not: the race was
    // run, not dodged.
    expect(inside).toBeGreaterThan(0);
    expect(away).toBeGreaterThan(0);
  });
});
