/**
 * Regression (attacker review): each triage wrote a run log and nothing removed them; 3,000 gateway triages
 * made 3,100 files. The log directory now keeps the newest KEPT_RUNS runs.
 */
import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createTriageLog, KEPT_RUNS, pruneRuns } from "../src/triage-log.ts";

let dir = "";
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** `n` run logs, the i-th modified i seconds after the epoch's year 2000 (older first), plus one other file. */
function runs(n: number): string {
  dir = mkdtempSync(join(tmpdir(), "roadnerd-runs-"));
  for (let i = 0; i < n; i++) {
    const f = join(dir, `triage-run${i}.jsonl`);
    writeFileSync(f, "{}\n");
    utimesSync(f, 946684800 + i, 946684800 + i);
  }
  writeFileSync(join(dir, "notes.txt"), "not a run");
  return dir;
}

describe("run logs are pruned to the newest", () => {
  it("removes the oldest beyond `keep`, by modification time, and leaves other files alone", () => {
    runs(12);
    expect(pruneRuns(dir, 5)).toBe(7);
    const left = readdirSync(dir).sort();
    expect(left).toEqual([
      "notes.txt",
      "triage-run10.jsonl",
      "triage-run11.jsonl",
      "triage-run7.jsonl",
      "triage-run8.jsonl",
      "triage-run9.jsonl",
    ]);
    expect(pruneRuns(dir, 5)).toBe(0);
  });

  it("a new triage log keeps the directory at KEPT_RUNS runs, its own included", () => {
    runs(KEPT_RUNS + 3);
    const log = createTriageLog(dir, "fresh");
    log.write({
      run_id: "fresh",
      step: 1,
      planner: "rules",
      requested_tool: null,
      attached: false,
      call_ok: true,
      duration_ms: 0,
      repaired: false,
      valid_first_try: true,
    });
    const left = readdirSync(dir).filter((f) => f.startsWith("triage-"));
    expect(left).toHaveLength(KEPT_RUNS);
    expect(left).toContain("triage-fresh.jsonl");
    expect(left).not.toContain("triage-run3.jsonl");
    expect(left).toContain("triage-run4.jsonl");
  });
});
