/** The one path every call takes, HTTP, SSE or MCP: validate, bound by a deadline, run, validate the result. */
import { setMaxListeners } from "node:events";
import type { Command } from "../define/command.ts";
import { DEFAULT_TIMEOUT_MS } from "../define/fields.ts";
import { oneLine } from "../define/limits.ts";
import type { AnyStream } from "../define/stream.ts";
import type { AnyTool, ExecCallOptions, ResultOf, ToolContext, ToolExec } from "../define/tool.ts";
import { DiagError, toDiagError } from "../errors/errors.ts";
import { checkRawStrings, type InputSpec, invalidInput } from "../errors/input-errors.ts";
import { DEADLINE_MARGIN_MS } from "../errors/socket-errors.ts";
import { observeAnswer, observeFailure } from "../metrics/observe-call.ts";
import { onSlotLost, preemptedError } from "./call-slots.ts";
import type { Logger } from "./logger.ts";
import { maskText } from "./mask.ts";
import type { Runtime } from "./runtime.ts";
import { callKey } from "./shared-calls.ts";
import { checkTargets } from "./targets.ts";

/** Time a handler gets after its deadline to turn an abort into a diagnosis before we answer E_TIMEOUT. */
export const DEADLINE_GRACE_MS = 300;

/** A checked result or message, before the kernel stamps its summary and run_id. */
export type Stamped = Record<string, unknown> & { summary: string; run_id?: string };

export interface ToolCallOptions {
  /** Aborts when the caller goes away (HTTP socket closed, MCP cancellation). */
  signal?: AbortSignal | undefined;
  /** The caller shows progress (SSE `progress` events): what the handler passes to ctx.progress. */
  onProgress?: ((progress: Record<string, unknown>) => void) | undefined;
  /** Whose call it is, for the fair share of the call slots (http/caller-key.ts); default: one local caller. */
  caller?: string | undefined;
}

/** Validate raw input against a tool's (or stream's) strict schema. Throws E_INVALID_INPUT. */
export function parseInput(spec: InputSpec, raw: unknown): Record<string, unknown> {
  // No body is no input; a JSON `null` is not an object (refused, as /mcp refuses `arguments: null`).
  if (raw === undefined) raw = {};
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new DiagError("E_INVALID_INPUT", `${spec.name}: input must be a JSON object`, {
      hint: `example: ${JSON.stringify(spec.example)}`,
    });
  }
  checkRawStrings(spec, raw);
  const parsed = spec.inputSchema.safeParse(raw);
  if (!parsed.success) throw invalidInput(spec, parsed.error);
  return parsed.data as Record<string, unknown>;
}

/**
 * A result or a message checked against its schema (a wrong shape is a bug: E_INTERNAL, never a leak;
 * undeclared fields dropped), then given its one-line summary.
 */
export function checkAndSummarize(
  owner: { name: string; summarize(value: never): string },
  schema: {
    safeParse(v: unknown): { success: true; data: unknown } | { success: false; error: { issues: unknown[] } };
  },
  value: unknown,
  /** The logger, asked for only when the value is wrong (a call's own is made on first use). */
  log: () => Logger,
  what: "result" | "message",
): Stamped {
  const checked = schema.safeParse({ ...(value as object), summary: "-" });
  if (!checked.success) {
    log().error({ issues: checked.error.issues.slice(0, 5) }, `${what} outside its schema`);
    throw new DiagError("E_INTERNAL", `${owner.name} produced an invalid ${what}`);
  }
  const stamped = checked.data as Stamped;
  stamped.summary = oneLine((owner.summarize as (v: Stamped) => string)(stamped));
  return stamped;
}

/** `ctx.exec` for one call: the owner's own exec, with the call's deadline and signal unless told otherwise. */
export function boundExec(
  runtime: Runtime<unknown>,
  owner: AnyTool | AnyStream,
  signal: AbortSignal,
  remaining: () => number,
): ToolExec {
  const exec = runtime.execFor(owner);
  const bound = (cmd: Command, values?: Readonly<Record<string, string | number>>, options: ExecCallOptions = {}) =>
    exec(cmd as Command<never>, values as undefined, {
      timeoutMs: options.timeoutMs ?? remaining(),
      signal,
      ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }),
    });
  return bound;
}

/** Validate and run: bad input is a rejected promise (E_INVALID_INPUT), never a synchronous throw. */
export async function runTool<T extends AnyTool>(
  tool: T,
  raw: unknown,
  runtime: Runtime<unknown>,
  options: ToolCallOptions = {},
): Promise<ResultOf<T>> {
  let input: Record<string, unknown>;
  try {
    input = parseInput(tool, raw);
  } catch (err) {
    observeFailure(runtime.metrics, tool.name, performance.now(), err);
    throw err;
  }
  return runParsedTool(tool, input, runtime, options);
}

/**
 * Run a tool on input parseInput already checked (the SSE route validates before its stream starts).
 * Identical concurrent calls share one execution (and a snapshot tool's recent answer); new work takes a slot
 * of the server's call bound or is refused with E_BUSY. Each caller gets its own run_id on the shared result.
 */
export async function runParsedTool<T extends AnyTool>(
  tool: T,
  input: Record<string, unknown>,
  runtime: Runtime<unknown>,
  options: ToolCallOptions = {},
): Promise<ResultOf<T>> {
  const runId = input.run_id as string | undefined;
  const started = performance.now();
  try {
    const result = await runChecked(tool, input, runtime, options);
    observeAnswer(runtime.metrics, tool.name, started);
    return (runId ? { ...result, run_id: runId } : result) as ResultOf<T>;
  } catch (err) {
    observeFailure(runtime.metrics, tool.name, started, err);
    throw err;
  }
}

/** Targets checked, then the call's own execution or a share of an identical one in flight. */
async function runChecked(
  tool: AnyTool,
  input: Record<string, unknown>,
  runtime: Runtime<unknown>,
  options: ToolCallOptions,
): Promise<Stamped> {
  checkTargets(tool, input, runtime);
  const own = async (signal: AbortSignal) => {
    // Preemptible: a caller over its share gives this slot up to one under it (call-slots.ts), answered E_BUSY.
    const preempted = new AbortController();
    const release = runtime.calls.take(tool.name, options.caller, () =>
      preempted.abort(preemptedError(tool.name, runtime.calls.max)),
    );
    try {
      return await execute(tool, input, runtime, signal, options.onProgress, preempted.signal);
    } finally {
      release();
    }
  };
  // A caller that shows progress gets its own execution: a shared one reports to its first caller only.
  return options.onProgress
    ? await own(options.signal ?? new AbortController().signal)
    : await runtime.shared.run(callKey(tool.name, input), options.signal, tool.snapshotMs ?? 0, own);
}

/**
 * The abort reason of a call that has answered, one per tool: only work still in flight sees it, and an Error
 * built (its stack captured) on every call cost more than the rest of the call's bookkeeping (issue 17).
 */
const answered = new Map<string, DiagError>();
function answeredReason(name: string): DiagError {
  let reason = answered.get(name);
  if (!reason) {
    reason = new DiagError("E_TIMEOUT", `${name} already answered`);
    answered.set(name, reason);
  }
  return reason;
}

/** One execution: deadline, handler, result schema, summary. The caller's run_id is stamped by runParsedTool. */
async function execute<T extends AnyTool>(
  tool: T,
  input: Record<string, unknown>,
  runtime: Runtime<unknown>,
  signal: AbortSignal,
  onProgress: ToolCallOptions["onProgress"],
  preempted: AbortSignal,
): Promise<Stamped> {
  const timeoutMs = (input.timeout_ms as number | undefined) ?? DEFAULT_TIMEOUT_MS;
  const runId = input.run_id as string | undefined;
  const started = performance.now();
  const controller = new AbortController();
  // A handler may fan out (one statfs per mount, one probe per address), each waiting on this signal.
  setMaxListeners(0, controller.signal);
  // One timer a call: the deadline aborts the handler and only then arms the grace after it (the hard stop).
  let hardStop: NodeJS.Timeout | undefined;
  let stopHard: (err: DiagError) => void = () => undefined;
  const hardStopped = new Promise<never>((_, reject) => {
    stopHard = reject;
  });
  // Raced, or never looked at when the handler answers first: not an unhandled rejection either way.
  hardStopped.catch(() => {});
  const deadline = setTimeout(() => {
    controller.abort(new DiagError("E_TIMEOUT", `${tool.name} timed out (timeout ${timeoutMs} ms)`));
    hardStop = setTimeout(
      () => stopHard(new DiagError("E_TIMEOUT", `${tool.name} did not finish (timeout ${timeoutMs} ms)`)),
      DEADLINE_GRACE_MS,
    );
  }, timeoutMs);
  const onCallerGone = () => controller.abort(new DiagError("E_TIMEOUT", `${tool.name} cancelled by the caller`));
  // Its slot went to another caller: the answer is E_BUSY now, whatever the handler makes of the abort.
  const { lost: lostSlot, release: stopWatchingSlot } = onSlotLost(preempted, controller);
  if (signal.aborted) onCallerGone();
  signal.addEventListener("abort", onCallerGone, { once: true });
  // The server closed (its shutdown answer, if any, is out): the work stops now, not at the call's deadline.
  const onClosed = () => controller.abort(new DiagError("E_BUSY", `${tool.name} cancelled: the server has closed`));
  if (runtime.closed.aborted) onClosed();
  runtime.closed.addEventListener("abort", onClosed, { once: true });
  const remaining = () => Math.max(1, Math.round(timeoutMs - (performance.now() - started)));
  // The call's logger is made when first used: most calls log nothing at the configured level.
  let log: Logger | undefined;
  const callLog = () => {
    log ??= runtime.log.child({ tool: tool.name, run_id: runId });
    return log;
  };
  const ctx: ToolContext<unknown> = {
    get log() {
      return callLog();
    },
    outbound: runtime.outbound,
    config: runtime.config,
    use: (resource) => runtime.use(resource),
    exec: boundExec(runtime, tool, controller.signal, remaining),
    signal: controller.signal,
    timeoutMs,
    runId,
    remaining,
    budget: () => Math.max(1, remaining() - DEADLINE_MARGIN_MS),
    progress: (p) => {
      if (!controller.signal.aborted) onProgress?.(p);
    },
  };
  try {
    const output = await Promise.race([tool.handler({ ...input }, ctx), lostSlot, hardStopped]);
    const result = checkAndSummarize(tool, tool.outputSchema, output, callLog, "result");
    if (runtime.log.isLevelEnabled("info"))
      callLog().info({ duration_ms: Math.round(performance.now() - started) }, "tool done");
    return result;
  } catch (err) {
    const diag = toDiagError(err);
    const level = diag.code === "E_INTERNAL" ? "error" : "info";
    // The reason (masked) says what was refused or failed: a denied target, a missing binary… Masked only when
    // it is written: an expected answer (E_UNSUPPORTED, E_NOT_FOUND) at a quieter level costs no regex pass.
    if (runtime.log.isLevelEnabled(level)) {
      const why = diag.code === "E_INTERNAL" ? { err } : { reason: maskText(diag.message) };
      callLog()[level]({ code: diag.code, ...why }, "tool failed");
    }
    throw diag;
  } finally {
    clearTimeout(deadline);
    clearTimeout(hardStop);
    signal.removeEventListener("abort", onCallerGone);
    runtime.closed.removeEventListener("abort", onClosed);
    stopWatchingSlot();
    // The call has answered: whatever the handler still has in flight (a probe, a process) stops now.
    controller.abort(answeredReason(tool.name));
  }
}
