/**
 * The one path every stream takes (`runStream` beside `runTool`): checked input, a bounded duration, each
 * message checked against the stream's schema with its summary and run_id added, its work stopped (child
 * processes included) when the duration ends or the consumer goes away. No HTTP here: the SSE route and
 * unit tests are both consumers.
 */
import type { Command } from "../define/command.ts";
import { DEFAULT_TIMEOUT_MS } from "../define/fields.ts";
import {
  type AnyStream,
  DEFAULT_STREAM_DURATION_MS,
  type LinesCallOptions,
  MAX_STREAM_DURATION_MS,
  type MessageOf,
  type StreamContext,
  type StreamExecLines,
} from "../define/stream.ts";
import { DiagError, toDiagError } from "../errors/errors.ts";
import { createExecLines } from "../exec/exec.ts";
import { maskText } from "./mask.ts";
import { boundExec, checkAndSummarize, parseInput, runTool } from "./run-tool.ts";
import type { Runtime } from "./runtime.ts";

/** Why a stream ended: its work finished, its duration ran out, or the consumer went away. */
export type StreamEnd = "done" | "duration" | "closed";

export interface StreamOptions<S extends AnyStream> {
  /** Receives each checked message; resolves false when the consumer can take no more. */
  send(message: MessageOf<S>): Promise<boolean>;
  /** Aborts when the consumer goes away. */
  signal?: AbortSignal | undefined;
  /** No duration of its own: runs until `signal` aborts (the stream hub's shared producer). */
  unbounded?: boolean;
}

export function abortableSleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const t = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      resolve(false);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

export async function runStream<S extends AnyStream>(
  stream: S,
  raw: unknown,
  runtime: Runtime<unknown>,
  options: StreamOptions<S>,
): Promise<StreamEnd> {
  return runParsedStream(stream, parseInput(stream, raw), runtime, options);
}

export async function runParsedStream<S extends AnyStream>(
  stream: S,
  input: Record<string, unknown>,
  runtime: Runtime<unknown>,
  options: StreamOptions<S>,
): Promise<StreamEnd> {
  const runId = input.run_id as string | undefined;
  const duration = (input.duration_ms as number | undefined) ?? DEFAULT_STREAM_DURATION_MS;
  const started = performance.now();
  const controller = new AbortController();
  let end: StreamEnd = "done";
  const stop = (why: StreamEnd) => {
    if (controller.signal.aborted) return;
    end = why;
    controller.abort(new DiagError("E_TIMEOUT", `${stream.name} ended (${why})`));
  };
  const stopAt = options.unbounded ? undefined : setTimeout(() => stop("duration"), duration);
  const onGone = () => stop("closed");
  if (options.signal?.aborted) onGone();
  options.signal?.addEventListener("abort", onGone, { once: true });
  const signal = controller.signal;
  const left = () => (options.unbounded ? DEFAULT_TIMEOUT_MS : duration - (performance.now() - started));
  const remaining = () => Math.max(1, Math.min(DEFAULT_TIMEOUT_MS, Math.round(left())));
  const boundLines = (cmd: Command, values?: Readonly<Record<string, string | number>>, opts: LinesCallOptions = {}) =>
    createExecLines(stream.commands, runtime.config.EXEC_PATH)(cmd as Command<never>, values as undefined, {
      signal,
      timeoutMs: opts.timeoutMs ?? (options.unbounded ? MAX_STREAM_DURATION_MS : Math.max(1, Math.round(left()))),
      ...(opts.maxLineChars === undefined ? {} : { maxLineChars: opts.maxLineChars }),
    });
  const ctx: StreamContext<unknown> = {
    log: runtime.log.child({ stream: stream.name, run_id: runId }),
    outbound: runtime.outbound,
    config: runtime.config,
    use: (resource) => runtime.use(resource),
    exec: boundExec(runtime, stream, signal, remaining),
    execLines: boundLines as StreamExecLines,
    signal,
    runId,
    sleep: (ms) => abortableSleep(ms, signal),
    call: (tool, args) => runTool(tool, args, runtime, { signal }),
    async emit(data) {
      if (signal.aborted) return false;
      // Messages are checked like tool results: a wrong shape is a bug, not a message.
      const message = checkAndSummarize(stream, stream.messageSchema, data, () => ctx.log, "message");
      if (runId) message.run_id = runId;
      const more = await options.send(message as MessageOf<S>);
      if (!more) stop("closed");
      return more && !signal.aborted;
    },
  };
  try {
    await stream.run({ ...input }, ctx);
    return end;
  } catch (err) {
    // As for a tool: the consumer gets the typed error; the log keeps why (the cause, for a bug).
    const diag = toDiagError(err);
    const why = diag.code === "E_INTERNAL" ? { err } : { reason: maskText(diag.message) };
    ctx.log[diag.code === "E_INTERNAL" ? "error" : "info"]({ code: diag.code, ...why }, "stream failed");
    throw diag;
  } finally {
    clearTimeout(stopAt);
    options.signal?.removeEventListener("abort", onGone);
    // The stream is over: whatever its work still has in flight stops now.
    stop(end);
  }
}
