/** Every triage step as one JSON line, `mode: "mcp_triage"`, one file per run in ROADNERD_LOG_DIR. */
import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

export interface StepLine {
  run_id: string;
  step: number;
  planner: string;
  requested_tool: string | null;
  resolved_from?: string;
  attached: boolean;
  restarted?: boolean;
  call_ok: boolean;
  duration_ms: number;
  attach_ms?: number;
  /** A repair prompt was needed for this step's reply. */
  repaired: boolean;
  /** The first reply of this step was valid as it was. */
  valid_first_try: boolean;
  error_code?: string;
  label?: string;
  reason?: string;
}

export interface TriageLog {
  readonly path: string | undefined;
  write(line: StepLine): void;
}

/** A log writing `<dir>/triage-<run_id>.jsonl`; without a dir, nothing is written. */
export function createTriageLog(dir: string | undefined, runId: string): TriageLog {
  if (!dir) return { path: undefined, write: () => {} };
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `triage-${runId}.jsonl`);
  return {
    path,
    write: (line) => {
      // Synchronous: a crash right after a step still leaves that step on disk.
      appendFileSync(path, `${JSON.stringify({ ts: new Date().toISOString(), mode: "mcp_triage", ...line })}\n`);
    },
  };
}
