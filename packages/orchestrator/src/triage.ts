/**
 * The triage loop: planner → strict validation (one repair) → attach → call (timeout_ms, run_id passed
 * through) → result back to the planner, until a label or the step budget. Every step is one log line,
 * written in one place (`write`); the outcome's evidence and metrics are read off the history.
 */
import { randomBytes } from "node:crypto";
import { runIdField } from "@roadnerd/conventions";
import type { Attacher } from "./attach.ts";
import type { Catalog } from "./catalog.ts";
import { DEFAULT_STEP_BUDGET, MAX_STEP_BUDGET } from "./config.ts";
import { errorInfo, UsageError } from "./errors.ts";
import type { Label } from "./labels.ts";
import { type ParsedReply, parseReply } from "./parse-reply.ts";
import type { Planner, PlannerInput, Reply, StepRecord } from "./planners/planner.ts";
import { createTriageLog, type StepLine, type TriageLog } from "./triage-log.ts";
import { categoryHint, type Evidence, type TriageReport } from "./triage-report.ts";

export interface TriageOptions {
  planner: Planner;
  catalog: Catalog;
  attacher: Attacher;
  symptom?: string;
  /** Tool calls allowed (default 3; 0: a label from the symptom alone, the evaluation's baseline). */
  budget?: number;
  /** timeout_ms passed to every call unless the planner set one. */
  timeoutMs?: number;
  runId?: string;
  log?: TriageLog;
  logDir?: string;
  /** Live progress: each step as it ends. */
  onStep?: (line: StepLine) => void;
  signal?: AbortSignal;
  /** Another machine of ROADNERD_HOSTS whose servers answer every call (default: this machine). */
  host?: string;
  /** The client the triage runs for (the gateway's share key), named to the servers it calls. */
  caller?: string;
}

export interface TriageOutcome extends TriageReport {
  history: StepRecord[];
  log_path?: string;
  /** Why no log was written (its directory could not be made). */
  log_error?: string;
}

/** One turn of the planner: its checked reply (or its failure), and whether it needed the repair. */
type Turn = (ParsedReply | { kind: "failed"; code: string; message: string }) & {
  repaired: boolean;
  valid_first_try: boolean;
};
type CallTurn = Extract<Turn, { kind: "call" }>;
type EndTurn = Exclude<Turn, CallTurn>;
/** A step's line without what every line of the run carries. */
type StepFields = Omit<StepLine, "run_id" | "planner" | "step">;
type Tally = { replies: number; valid_first_try: number; repairs: number };

export function newRunId(): string {
  return `rn-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
}

export async function runTriage(options: TriageOptions): Promise<TriageOutcome> {
  const started = performance.now();
  // The caller's id names the log file and reaches every server: only the servers' own run_id shape.
  if (!runIdField.safeParse(options.runId).success) {
    throw new UsageError(
      `run_id: expected 1-64 chars of A-Z a-z 0-9 . _ : -, got ${String(options.runId).slice(0, 70)}`,
    );
  }
  const runId = options.runId ?? newRunId();
  const log = options.log ?? createTriageLog(options.logDir, runId);
  const budget = stepBudget(options.budget);
  const history: StepRecord[] = [];
  const tally: Tally = { replies: 0, valid_first_try: 0, repairs: 0 };
  const write = (step: number, fields: StepFields) => {
    const line: StepLine = { run_id: runId, planner: options.planner.name, step, ...fields };
    log.write(line);
    options.onStep?.(line);
  };
  // Each turn before the last makes one call; turn budget + 1 is final, where only a label ends it well.
  for (let step = 1; step <= budget + 1; step += 1) {
    const asked = performance.now();
    const turn = await takeTurn(options, history, history.length >= budget, tally);
    if (turn.kind !== "call") {
      const end = verdictOf(turn);
      const measured = outcomeOf(history, tally, started);
      const hint = categoryHint(end.label, end.reason, measured.evidence);
      write(step, { ...endFields(turn, end), category_hint: hint, duration_ms: ms(asked) });
      const outcome = { label: end.label, reason: end.reason, category_hint: hint, ...measured, run_id: runId };
      if (log.error) return { ...outcome, log_error: log.error };
      return log.path ? { ...outcome, log_path: log.path } : outcome;
    }
    const called = performance.now();
    const { record, fields } = await callStep(options, turn, runId, history.length + 1);
    history.push(record);
    write(step, { ...fields, duration_ms: ms(called) });
  }
  throw new Error("the final turn ends the run: it accepts only a label");
}

/** Ask the planner; an invalid reply gets the one repair prompt. A call past the budget is invalid. */
async function takeTurn(
  options: TriageOptions,
  history: readonly StepRecord[],
  final: boolean,
  tally: Tally,
): Promise<Turn> {
  const ask = (repair?: PlannerInput["repair"]) =>
    options.planner.next({
      symptom: options.symptom ?? "",
      catalog: options.catalog,
      history,
      final,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(repair ? { repair } : {}),
    });
  const judge = (reply: Reply): ParsedReply => {
    const parsed = parseReply(reply, options.catalog);
    if (final && parsed.kind === "call") {
      return { kind: "invalid", code: "E_BAD_SHAPE", message: "the step budget is spent: return the label JSON" };
    }
    return parsed;
  };
  let repaired = false;
  let validFirst = false;
  try {
    const reply = await ask();
    tally.replies += 1;
    let parsed = judge(reply);
    validFirst = parsed.kind !== "invalid";
    if (parsed.kind === "invalid") {
      repaired = true;
      tally.repairs += 1;
      const { code, message, suggestions } = parsed;
      const text = typeof reply === "string" ? reply : JSON.stringify(reply);
      parsed = judge(await ask({ reply: text, code, message, ...(suggestions ? { suggestions } : {}) }));
    } else tally.valid_first_try += 1;
    return { ...parsed, repaired, valid_first_try: validFirst };
  } catch (err) {
    const { code, message } = errorInfo(err);
    return { kind: "failed", code, message, repaired, valid_first_try: validFirst };
  }
}

/** How a turn that is not a call ends the run: its label, reason and (for a failure) code. */
function verdictOf(turn: EndTurn): { label: Label; reason: string; error_code?: string } {
  switch (turn.kind) {
    case "label":
      return { label: turn.label, reason: turn.reason };
    case "invalid":
      return { label: "unknown", reason: `no valid reply after one repair: ${turn.message}`, error_code: turn.code };
    case "failed":
      return { label: "unknown", reason: `planner failed: ${turn.message}`, error_code: turn.code };
  }
}

function endFields(turn: EndTurn, end: ReturnType<typeof verdictOf>): Omit<StepFields, "duration_ms"> {
  return {
    requested_tool: null,
    attached: false,
    call_ok: turn.kind === "label",
    repaired: turn.repaired,
    valid_first_try: turn.valid_first_try,
    ...end,
  };
}

/** Call the tool (attaching its server as needed): the step for the history and the fields for its line. */
async function callStep(
  options: TriageOptions,
  turn: CallTurn,
  runId: string,
  n: number,
): Promise<{ record: StepRecord; fields: Omit<StepFields, "duration_ms"> }> {
  const { id, server, tool, params } = turn.call;
  const timeout = options.timeoutMs !== undefined && params.timeout_ms === undefined;
  const sent = { ...params, run_id: runId, ...(timeout ? { timeout_ms: options.timeoutMs } : {}) };
  const base = {
    requested_tool: id,
    ...(turn.resolvedFrom ? { resolved_from: turn.resolvedFrom } : {}),
    repaired: turn.repaired,
    valid_first_try: turn.valid_first_try,
  };
  try {
    const r = await options.attacher.call(server, tool, sent, {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.host ? { host: options.host } : {}),
      ...(options.caller ? { caller: options.caller } : {}),
    });
    return {
      record: { step: n, tool: id, params, ok: true, result: r.result },
      fields: {
        ...base,
        attached: r.attached,
        ...(r.restarted ? { restarted: true } : {}),
        ...(r.attached ? { attach_ms: r.attachMs } : {}),
        call_ok: true,
      },
    };
  } catch (err) {
    const error = errorInfo(err);
    return {
      record: { step: n, tool: id, params, ok: false, error },
      fields: { ...base, attached: false, call_ok: false, error_code: error.code },
    };
  }
}

/** Steps, evidence and metrics, read off the history. */
function outcomeOf(history: StepRecord[], tally: Tally, started: number) {
  const failed = history.filter((s) => !s.ok);
  const metrics = {
    ...tally,
    tool_errors: failed.length,
    timeouts: history.filter((s) => !s.ok && s.error.code === "E_TIMEOUT").length,
    duration_ms: ms(started),
  };
  return { steps: history.length, evidence: history.map(evidenceOf), metrics, history };
}

function evidenceOf(s: StepRecord): Evidence {
  const { tool, params } = s;
  if (!s.ok) return { tool, params, ok: false, error: { code: s.error.code, message: s.error.message } };
  return { tool, params, ok: true, summary: typeof s.result.summary === "string" ? s.result.summary : "" };
}

/** The budget asked for, within 0…MAX_STEP_BUDGET: a planner may loop, so no run makes more calls. */
function stepBudget(asked: number | undefined): number {
  if (asked === undefined || !Number.isInteger(asked)) return DEFAULT_STEP_BUDGET;
  return Math.min(Math.max(asked, 0), MAX_STEP_BUDGET);
}

const ms = (since: number) => Math.round(performance.now() - since);
