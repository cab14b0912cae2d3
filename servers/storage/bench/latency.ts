/**
 * Storage's per-tool latency against the tools underneath, measured the same way in the same run:
 * top_consumers against `du` on the same tree (20,000 files in 1,100 directories, built in the temp dir),
 * disk_usage against `df`. du and df are spawned through the kernel's exec, like any command. Used by
 * `pnpm bench`; the ratio is tool p50 / du p50 (HTTP included on our side, process start-up on du's).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { command, slot } from "@roadnerd/conventions";
import { testExec } from "@roadnerd/conventions/testing";
import type { BenchCall, BenchContext } from "@roadnerd/testkit";

const PATH = /^\/[^\n]+$/;
const duSum = command("du", ["-x", "-s", "-B1", slot("path", PATH)]);
const duDepth2 = command("du", ["-x", "-a", "-d", "2", "-B1", slot("path", PATH)]);
const df = command("df", ["-B1", "--output=source,fstype,size,used,avail,pcent,itotal,iused,ipcent,target"]);
const exec = testExec([duSum, duDepth2, df]);
const EXEC_OPTIONS = { timeoutMs: 15_000, maxBytes: 16 * 1024 * 1024 };

/** 100 directories × 10 subdirectories × 20 files of 0–1,900 bytes: 20,000 files, 1,101 directories. */
function buildTree(root: string): void {
  for (let i = 0; i < 100; i++) {
    for (let j = 0; j < 10; j++) {
      const dir = join(root, `d${i}`, `s${j}`);
      mkdirSync(dir, { recursive: true });
      for (let k = 0; k < 20; k++) writeFileSync(join(dir, `f${k}`), Buffer.alloc(k * 100, 1));
    }
  }
}

export async function benchLatency(b: BenchContext): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), "rn-storage-bench-"));
  const tree = join(base, "tree");
  buildTree(tree);
  const srv = await b.start({ STORAGE_ROOTS: base });
  try {
    await b.pair(
      "top_consumers d=2",
      () => b.call(srv, "top_consumers", { path: tree, depth: 2, n: 10, timeout_ms: 15_000 }),
      "du -x -a -d 2 (20k files)",
      () => exec(duDepth2, { path: tree }, EXEC_OPTIONS),
    );
    await b.pair(
      "top_consumers d=1",
      () => b.call(srv, "top_consumers", { path: tree, depth: 1, n: 10, timeout_ms: 15_000 }),
      "du -x -s (20k files)",
      () => exec(duSum, { path: tree }, EXEC_OPTIONS),
    );
    await b.pair(
      "disk_usage",
      () => b.call(srv, "disk_usage", {}),
      "df -B1 --output",
      () => exec(df, undefined, EXEC_OPTIONS),
    );
  } finally {
    srv.kill();
    rmSync(base, { recursive: true, force: true });
  }
}

/** A cheap call for the /mcp vs /actions comparison. */
export async function cheapCall(): Promise<BenchCall> {
  return { tool: "disk_usage", args: {}, close: () => {} };
}
