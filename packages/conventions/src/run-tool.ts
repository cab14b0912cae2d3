/** The one path every call takes, HTTP or MCP: validate, bound by a deadline, run, validate the result. */

import { DiagError, toDiagError } from "./errors.ts";
import { DEFAULT_TIMEOUT_MS } from "./fields.ts";
import { checkRawStrings, type InputSpec, invalidInput } from "./input-errors.ts";
import { oneLine } from "./limits.ts";
import type { AnyTool, ToolContext } from "./tool.ts";

/** Time a handler gets after its deadline to turn an abort into a diagnosis before we answer E_TIMEOUT. */
export const DEADLINE_GRACE_MS = 300;

export type BaseContext = Omit<ToolContext, "signal" | "timeoutMs" | "remaining" | "runId">;

export interface ToolCallOptions {
  /** Aborts when the caller goes away (HTTP socket closed, MCP cancellation). */
  signal?: AbortSignal | undefined;
}

export type ToolResult = Record<string, unknown> & { summary: string; run_id?: string };

/** Validate raw input against a tool's (or stream's) strict schema. Throws E_INVALID_INPUT. */
export function parseToolInput(tool: InputSpec, raw: unknown): Record<string, unknown> {
  if (raw === undefined || raw === null) raw = {};
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw new DiagError("E_INVALID_INPUT", `${tool.name}: input must be a JSON object`, {
      hint: `example: ${JSON.stringify(tool.example)}`,
    });
  }
  checkRawStrings(tool, raw);
  const parsed = tool.inputSchema.safeParse(raw);
  if (!parsed.success) throw invalidInput(tool, parsed.error);
  return parsed.data as Record<string, unknown>;
}

export function runTool(
  tool: AnyTool,
  raw: unknown,
  base: BaseContext,
  options: ToolCallOptions = {},
): Promise<ToolResult> {
  return runParsedTool(tool, parseToolInput(tool, raw), base, options);
}

/** Run a tool on input parseToolInput already checked (the SSE route validates before its stream starts). */
export async function runParsedTool(
  tool: AnyTool,
  input: Record<string, unknown>,
  base: BaseContext,
  options: ToolCallOptions = {},
): Promise<ToolResult> {
  const timeoutMs = (input.timeout_ms as number | undefined) ?? DEFAULT_TIMEOUT_MS;
  const runId = input.run_id as string | undefined;
  const started = performance.now();
  const controller = new AbortController();
  const deadline = setTimeout(
    () => controller.abort(new DiagError("E_TIMEOUT", `${tool.name} timed out (timeout ${timeoutMs} ms)`)),
    timeoutMs,
  );
  const onCallerGone = () => controller.abort(new DiagError("E_TIMEOUT", `${tool.name} cancelled by the caller`));
  if (options.signal?.aborted) onCallerGone();
  options.signal?.addEventListener("abort", onCallerGone, { once: true });
  const ctx: ToolContext = {
    ...base,
    log: base.log.child({ tool: tool.name, run_id: runId }),
    signal: controller.signal,
    timeoutMs,
    runId,
    remaining: () => Math.max(1, Math.round(timeoutMs - (performance.now() - started))),
  };
  let hardStop: NodeJS.Timeout | undefined;
  try {
    const handlerInput = { ...input };
    const output = await Promise.race([
      tool.handler(handlerInput, ctx),
      new Promise<never>((_, reject) => {
        hardStop = setTimeout(
          () => reject(new DiagError("E_TIMEOUT", `${tool.name} did not finish (timeout ${timeoutMs} ms)`)),
          timeoutMs + DEADLINE_GRACE_MS,
        );
      }),
    ]);
    const checked = tool.outputSchema.safeParse({ ...output, summary: "-" });
    if (!checked.success) {
      ctx.log.error({ issues: checked.error.issues.slice(0, 5) }, "tool returned a result outside its schema");
      throw new DiagError("E_INTERNAL", `${tool.name} produced an invalid result`);
    }
    const result = checked.data as ToolResult;
    result.summary = oneLine(tool.summarize(result));
    if (runId) result.run_id = runId;
    ctx.log.info({ duration_ms: Math.round(performance.now() - started) }, "tool done");
    return result;
  } catch (err) {
    const diag = toDiagError(err);
    const level = diag.code === "E_INTERNAL" ? "error" : "info";
    ctx.log[level]({ code: diag.code, err: diag.code === "E_INTERNAL" ? err : undefined }, "tool failed");
    throw diag;
  } finally {
    clearTimeout(deadline);
    clearTimeout(hardStop);
    options.signal?.removeEventListener("abort", onCallerGone);
    // The call has answered: whatever the handler still has in flight (a probe, a process) stops now.
    controller.abort(new DiagError("E_TIMEOUT", `${tool.name} already answered`));
  }
}
