/**
 * Every triage step as one JSON line, `mode: "mcp_triage"`, one file per run (`triage-<run_id>.jsonl`) in the
 * log directory (config.ts: ROADNERD_LOG_DIR, else $XDG_STATE_HOME/roadnerd/runs). The line's schema is the
 * contract for its readers (the evaluation parses the log with it).
 */
import { appendFileSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

export const stepLineSchema = z.object({
  run_id: z.string(),
  step: z.number().int().describe("1 for the first turn"),
  planner: z.string().describe("rules, openai, scripted"),
  requested_tool: z.string().nullable().describe("`<server>/<tool>` called; null on a turn that ended the run"),
  resolved_from: z.string().optional().describe("the near-miss name the planner used"),
  attached: z.boolean().describe("this call started (or first reached) its server"),
  restarted: z.boolean().optional().describe("the server had died and was started again"),
  call_ok: z.boolean(),
  duration_ms: z.number().int().describe("the call; on a closing turn, the planner's"),
  attach_ms: z.number().int().optional(),
  repaired: z.boolean().describe("a repair prompt was needed for this step's reply"),
  valid_first_try: z.boolean().describe("the first reply of this step was valid as it was"),
  error_code: z.string().optional(),
  label: z.string().optional().describe("on the last line: the run's label"),
  reason: z.string().optional(),
  category_hint: z.string().optional().describe("on the last line: the label and its evidence, one line"),
});

export type StepLine = z.infer<typeof stepLineSchema>;

/** A line as written: the step, its time and the mode. */
export const loggedLineSchema = stepLineSchema.extend({ ts: z.string(), mode: z.literal("mcp_triage") });

export type LoggedLine = z.infer<typeof loggedLineSchema>;

export interface TriageLog {
  readonly path: string | undefined;
  /** Why nothing is written (the directory could not be made), when so. */
  readonly error?: string;
  write(line: StepLine): void;
}

const NO_LOG: TriageLog = { path: undefined, write: () => {} };

/** Run logs kept per directory: the newest, so a busy gateway cannot fill the disk with them. */
export const KEPT_RUNS = 1000;

/** Removes the oldest `triage-*.jsonl` files beyond `keep` (by modification time); what it cannot read, it skips. */
export function pruneRuns(dir: string, keep = KEPT_RUNS): number {
  const runs = readdirSync(dir).filter((f) => f.startsWith("triage-") && f.endsWith(".jsonl"));
  if (runs.length <= keep) return 0;
  const aged = runs.flatMap((f) => {
    try {
      return [{ f, at: statSync(join(dir, f)).mtimeMs }];
    } catch {
      return [];
    }
  });
  aged.sort((a, b) => b.at - a.at);
  const old = aged.slice(keep);
  for (const { f } of old) rmSync(join(dir, f), { force: true });
  return old.length;
}

/**
 * A log writing `<dir>/triage-<run_id>.jsonl`; without a dir, nothing is written. The directory keeps the newest
 * KEPT_RUNS runs. A directory that cannot be
 * made does not stop the triage: the log says why it writes nothing (the CLI prints it).
 */
export function createTriageLog(dir: string | undefined, runId: string): TriageLog {
  if (!dir) return NO_LOG;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    return { ...NO_LOG, error: `${dir}: ${e instanceof Error ? e.message : String(e)}` };
  }
  try {
    pruneRuns(dir, KEPT_RUNS - 1); // room for this run's own
  } catch {
    // A directory we cannot list still takes this run's log.
  }
  const path = join(dir, `triage-${runId}.jsonl`);
  return {
    path,
    write: (line) => {
      // Synchronous: a crash right after a step still leaves that step on disk.
      appendFileSync(path, `${JSON.stringify({ ts: new Date().toISOString(), mode: "mcp_triage", ...line })}\n`);
    },
  };
}
