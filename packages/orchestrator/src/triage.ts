/**
 * The triage loop: planner → strict validation (one repair) → attach → call (timeout_ms, run_id passed
 * through) → result back to the planner, until a label or the step budget. Every step is logged.
 */
import { randomBytes } from "node:crypto";
import type { Attacher } from "./attach.ts";
import type { Catalog } from "./catalog.ts";
import { DEFAULT_STEP_BUDGET, MAX_STEP_BUDGET } from "./config.ts";
import { errorInfo } from "./errors.ts";
import type { Label } from "./labels.ts";
import { type ParsedReply, parseReply } from "./parse-reply.ts";
import type { Planner, StepRecord } from "./planners/planner.ts";
import { createTriageLog, type StepLine, type TriageLog } from "./triage-log.ts";

export interface TriageOptions {
  planner: Planner;
  catalog: Catalog;
  attacher: Attacher;
  symptom?: string;
  /** Tool calls allowed (default 3). */
  budget?: number;
  /** timeout_ms passed to every call unless the planner set one. */
  timeoutMs?: number;
  runId?: string;
  log?: TriageLog;
  logDir?: string;
  /** Live progress: each step as it ends. */
  onStep?: (line: StepLine) => void;
  signal?: AbortSignal;
}

export interface Evidence {
  tool: string;
  params: Record<string, unknown>;
  ok: boolean;
  summary?: string;
  error?: { code: string; message: string };
}

export interface TriageOutcome {
  label: Label;
  reason: string;
  /** Tool calls made. */
  steps: number;
  evidence: Evidence[];
  run_id: string;
  /** Metrics for the evaluation. */
  metrics: {
    replies: number;
    valid_first_try: number;
    repairs: number;
    tool_errors: number;
    timeouts: number;
    duration_ms: number;
  };
  history: StepRecord[];
  log_path?: string;
}

export function newRunId(): string {
  return `rn-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
}

export async function runTriage(options: TriageOptions): Promise<TriageOutcome> {
  const started = performance.now();
  const runId = options.runId ?? newRunId();
  const log = options.log ?? createTriageLog(options.logDir, runId);
  const asked = options.budget ?? DEFAULT_STEP_BUDGET;
  // 0: no tools at all, a label from the symptom alone (the evaluation's baseline).
  const budget = Number.isInteger(asked) ? Math.min(Math.max(asked, 0), MAX_STEP_BUDGET) : DEFAULT_STEP_BUDGET;
  const symptom = options.symptom ?? "";
  const history: StepRecord[] = [];
  const evidence: Evidence[] = [];
  const metrics = { replies: 0, valid_first_try: 0, repairs: 0, tool_errors: 0, timeouts: 0, duration_ms: 0 };
  const emit = (line: StepLine) => {
    log.write(line);
    options.onStep?.(line);
  };
  const finish = (label: Label, reason: string): TriageOutcome => {
    metrics.duration_ms = Math.round(performance.now() - started);
    const outcome: TriageOutcome = { label, reason, steps: history.length, evidence, run_id: runId, metrics, history };
    return log.path ? { ...outcome, log_path: log.path } : outcome;
  };
  const base = { run_id: runId, planner: options.planner.name };

  for (let step = 1; ; step += 1) {
    const final = history.length >= budget;
    const asked = performance.now();
    const ask = (repair?: { reply: string } & Extract<ParsedReply, { kind: "invalid" }>) =>
      options.planner.next({
        symptom,
        catalog: options.catalog,
        history,
        final,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(repair
          ? {
              repair: {
                reply: repair.reply,
                code: repair.code,
                message: repair.message,
                ...(repair.suggestions ? { suggestions: repair.suggestions } : {}),
              },
            }
          : {}),
      });
    const judge = (reply: string): ParsedReply => {
      const parsed = parseReply(reply, options.catalog);
      if (final && parsed.kind === "call") {
        return { kind: "invalid", code: "E_BAD_SHAPE", message: "the step budget is spent: return the label JSON" };
      }
      return parsed;
    };
    let parsed: ParsedReply;
    let repaired = false;
    let validFirst = false;
    try {
      const reply = await ask();
      metrics.replies += 1;
      parsed = judge(reply);
      validFirst = parsed.kind !== "invalid";
      if (validFirst) metrics.valid_first_try += 1;
      if (parsed.kind === "invalid") {
        repaired = true;
        metrics.repairs += 1;
        parsed = judge(await ask({ ...parsed, reply }));
      }
    } catch (err) {
      const { code, message } = errorInfo(err);
      emit({
        ...base,
        step,
        requested_tool: null,
        attached: false,
        call_ok: false,
        duration_ms: ms(asked),
        repaired,
        valid_first_try: validFirst,
        error_code: code,
        label: "unknown",
        reason: message,
      });
      return finish("unknown", `planner failed: ${message}`);
    }
    if (parsed.kind === "invalid") {
      const reason = `no valid reply after one repair: ${parsed.message}`;
      emit({
        ...base,
        step,
        requested_tool: null,
        attached: false,
        call_ok: false,
        duration_ms: ms(asked),
        repaired,
        valid_first_try: false,
        error_code: parsed.code,
        label: "unknown",
        reason,
      });
      return finish("unknown", reason);
    }
    if (parsed.kind === "label") {
      emit({
        ...base,
        step,
        requested_tool: null,
        attached: false,
        call_ok: true,
        duration_ms: ms(asked),
        repaired,
        valid_first_try: validFirst,
        label: parsed.label,
        reason: parsed.reason,
      });
      return finish(parsed.label, parsed.reason);
    }
    const { call } = parsed;
    const params: Record<string, unknown> = { ...call.params, run_id: runId };
    if (options.timeoutMs !== undefined && params.timeout_ms === undefined) params.timeout_ms = options.timeoutMs;
    const callStarted = performance.now();
    const record: StepRecord = { step: history.length + 1, tool: call.id, params: call.params, ok: false };
    const line: StepLine = {
      ...base,
      step,
      requested_tool: call.id,
      ...(parsed.resolvedFrom ? { resolved_from: parsed.resolvedFrom } : {}),
      attached: false,
      call_ok: false,
      duration_ms: 0,
      repaired,
      valid_first_try: validFirst,
    };
    try {
      const r = await options.attacher.call(
        call.server,
        call.tool,
        params,
        options.signal ? { signal: options.signal } : {},
      );
      record.ok = true;
      record.result = r.result;
      line.attached = r.attached;
      if (r.restarted) line.restarted = true;
      if (r.attached) line.attach_ms = r.attachMs;
      line.call_ok = true;
      evidence.push({ tool: call.id, params: call.params, ok: true, summary: String(r.result.summary ?? "") });
    } catch (err) {
      const error = errorInfo(err);
      record.error = error;
      line.error_code = error.code;
      metrics.tool_errors += 1;
      if (error.code === "E_TIMEOUT") metrics.timeouts += 1;
      evidence.push({ tool: call.id, params: call.params, ok: false, error });
    }
    line.duration_ms = ms(callStarted);
    history.push(record);
    emit(line);
  }
}

const ms = (since: number) => Math.round(performance.now() - since);
