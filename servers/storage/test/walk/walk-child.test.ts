/**
 * The walker children (ADR 0059): a walk that runs long enough hands directories to them and answers du's
 * sizes (hard links shared across the parts counted once, every directory down to the depth); a child killed
 * or stopped mid-walk costs time, never a byte (its part is walked again); an idle child is ended; a short walk
 * never starts one.
 */
import { linkSync, lstatSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { scaledMs } from "@roadnerd/testkit";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { endWalkChildren, leaseWalkChild, WALK_CHILD, walkChildPids } from "../../src/walk/child.ts";
import { type WalkResult, walk } from "../../src/walk/walker.ts";
import { du } from "../helpers/scratch-mounts.ts";
import { parseDu } from "../helpers/trees.ts";

const defaults = { ...WALK_CHILD };
const base = mkdtempSync(join(tmpdir(), "rn-storage-child-"));
const root = join(base, "tree");
// 40 × 8 directories of 30 files (~10k entries), some with data; two inodes hard-linked into every one of them:
// `shared` also at the root (listed first, so counted there whoever walks the rest), `roam` only in the parts.
mkdirSync(root);
writeFileSync(join(root, "shared"), "x".repeat(20_000));
writeFileSync(join(base, "roam"), "z".repeat(40_000));
for (let a = 0; a < 40; a++) {
  for (let b = 0; b < 8; b++) {
    const dir = join(root, `a${a}`, `b${b}`, "c");
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < 30; f++) writeFileSync(join(dir, `f${f}`), f % 7 ? "" : "y".repeat(a * 100 + f * 10));
    linkSync(join(root, "shared"), join(root, `a${a}`, `b${b}`, "link"));
    linkSync(join(base, "roam"), join(dir, "roam"));
  }
}
afterAll(() => {
  endWalkChildren();
  rmSync(base, { recursive: true, force: true });
});
afterEach(() => {
  Object.assign(WALK_CHILD, defaults);
  endWalkChildren();
});

const options = (extra: Partial<Parameters<typeof walk>[0]> = {}) => ({
  root,
  depth: 2,
  n: 1000,
  oneFilesystem: true,
  deadline: performance.now() + 120_000,
  signal: new AbortController().signal,
  avoid: new Set<string>(),
  ...extra,
});

/**
 * The same answer as the walk alone: every total, the same entries, and the depth-1 entries adding up to the
 * total (each inode counted once: `roam` in whichever part met it first, so entries' own sizes may differ).
 */
function expectSame(r: WalkResult, one: WalkResult): void {
  const totals = (w: WalkResult) => ({ ...w, entries: undefined, root: undefined });
  expect(totals(r)).toEqual(totals(one));
  expect(r.stopped).toBe("done");
  expect(r.entries.map((e) => e.name).sort()).toEqual(one.entries.map((e) => e.name).sort());
  const top = r.entries.filter((e) => !e.name.includes("/")).reduce((k, e) => k + e.bytes, 0);
  expect(top + lstatSync(root).blocks * 512).toBe(r.bytes);
}

/**
 * A walk with the child first, so the next one starts with it already running: on a loaded machine a child
 * started by the walk itself came up after this small tree was walked, and there was none to stop (CI, once).
 */
const childRunning = async () => {
  // Leased and given back at once: an idle child, as a walk leaves one. (Warm-up walks of this small tree started
  // none in five on a loaded CI machine, three times; its pid comes from the spawn helper, waited for, bounded.)
  const lease = leaseWalkChild(
    () => {},
    () => {},
  );
  expect(lease).toBeDefined();
  lease?.release();
  expect(await until(() => walkChildPids().length > 0, scaledMs(10_000))).toBe(true);
};

const alone = async () => {
  WALK_CHILD.enabled = false;
  const r = await walk(options());
  WALK_CHILD.enabled = true;
  return r;
};

const until = async (ok: () => boolean, ms = 10_000) => {
  for (const end = performance.now() + ms; !ok() && performance.now() < end; )
    await new Promise((r) => setTimeout(r, 20));
  return ok();
};

describe("walk with the walker children", () => {
  it("hands a long walk to the children and answers du's sizes, a shared inode counted once", async () => {
    WALK_CHILD.afterMs = 0;
    const r = await walk(options());
    expect(walkChildPids().length).toBeGreaterThan(0);
    const byDu = new Map(parseDu(du(["-x", "-d", "2", "-B1", root])).map(([bytes, path]) => [path, bytes]));
    expect(r.bytes).toBe(byDu.get(root));
    expectSame(r, await alone());
  });

  it("a child killed mid-walk costs time, not bytes: its part is walked again", async () => {
    WALK_CHILD.afterMs = 0;
    WALK_CHILD.count = 1;
    const want = await alone();
    await childRunning();
    let killed = 0;
    const r = await walk(
      options({
        progressEveryMs: 0,
        // Once the walk is well under way (the child has reported), not before it starts.
        onProgress: (p) => {
          const [pid] = walkChildPids();
          if (pid && killed === 0 && p.dirs >= 200) {
            killed = pid;
            process.kill(pid, "SIGKILL");
          }
        },
      }),
    );
    expect(killed).toBeGreaterThan(0);
    expectSame(r, want);
  });

  it("a child that stops answering is killed after stallMs and its part walked again", async () => {
    WALK_CHILD.afterMs = 0;
    WALK_CHILD.count = 1;
    WALK_CHILD.stallMs = 100;
    const want = await alone();
    await childRunning();
    // Stopped before the walk: the walk takes the idle child at its first slice, hands it directories and hears
    // nothing back (stopping it mid-walk raced a small tree's end on a loaded machine: CI, twice).
    const stopped = walkChildPids()[0] ?? 0;
    if (stopped) process.kill(stopped, "SIGSTOP");
    const r = await walk(options({ progressEveryMs: 0 }));
    expect(stopped).toBeGreaterThan(0);
    expectSame(r, want);
    // The stalled child was SIGKILLed (a stopped process still dies of it), not left behind.
    expect(walkChildPids()).not.toContain(stopped);
  });

  it("answers at its deadline with what it has while a child holds directories and says nothing", async () => {
    WALK_CHILD.afterMs = 0;
    WALK_CHILD.count = 1;
    const full = await alone();
    let stopped = 0;
    const started = performance.now();
    const r = await walk(
      options({
        deadline: performance.now() + 400,
        progressEveryMs: 0,
        onProgress: () => {
          const [pid] = walkChildPids();
          if (pid && stopped === 0) {
            stopped = pid;
            process.kill(pid, "SIGSTOP");
          }
        },
      }),
    );
    expect(stopped).toBeGreaterThan(0);
    expect(r.stopped).toBe("deadline");
    expect(r.truncated).toBe(true);
    expect(r.bytes).toBeLessThan(full.bytes);
    // At the deadline (give or take a slice and a loaded machine), not after the child's stall limit (5 s).
    expect(performance.now() - started).toBeLessThan(WALK_CHILD.stallMs);
    process.kill(stopped, "SIGCONT");
  });

  it("leaves an idle child in /, not in the last directory it walked (which it would hold busy)", async () => {
    WALK_CHILD.afterMs = 0;
    await walk(options());
    const pids = walkChildPids();
    expect(pids.length).toBeGreaterThan(0);
    expect(await until(() => pids.every((pid) => readlinkSync(`/proc/${pid}/cwd`) === "/"))).toBe(true);
  });

  it("ends an idle child after idleMs, and the next walk starts another", async () => {
    WALK_CHILD.afterMs = 0;
    WALK_CHILD.idleMs = 100;
    await walk(options());
    const [pid] = walkChildPids();
    expect(pid).toBeGreaterThan(0);
    expect(await until(() => walkChildPids().length === 0)).toBe(true);
    await walk(options());
    expect(walkChildPids()).not.toContain(pid);
    expect(walkChildPids().length).toBeGreaterThan(0);
  });

  it("a walk shorter than afterMs never starts one", async () => {
    WALK_CHILD.afterMs = 60_000;
    await walk(options());
    expect(walkChildPids()).toEqual([]);
  });
});
