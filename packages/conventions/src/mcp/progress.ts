/**
 * MCP `notifications/progress` for a tools/call whose caller sent `_meta.progressToken`: what a tool reports
 * through ctx.progress (the same reports an /sse/<tool> caller gets as `progress` events) becomes
 * `{ progressToken, progress, total?, message }`. `progress` always increases (the report's own numeric
 * `progress` when it gives one that does, else one more than the last); `message` is the report's `message`,
 * else its fields in one short line. At most one notification per PROGRESS_EVERY_MS, the latest report kept
 * and sent when the interval is over; `finish` sends that last one and closes, so nothing follows the result.
 */
import type { ProgressNotification } from "@modelcontextprotocol/sdk/types.js";

/** The least time between two notifications of one call: a fast walk reports far more often. */
export const PROGRESS_EVERY_MS = 100;
/** A progress message is a status line, not a result. */
export const PROGRESS_MESSAGE_CHARS = 120;

export type ProgressToken = string | number;
export type ProgressParams = ProgressNotification["params"];
export type Report = Record<string, unknown>;

export interface ProgressReporter {
  /** A tool's report: sent now, or kept as the latest until the interval is over. */
  report(progress: Report): void;
  /** Send the report still kept (the last one), then send nothing more. Call before the result goes out. */
  finish(): void;
}

/** The token of a request's `_meta`, if it has a valid one (MCP: a string or an integer). */
export function progressTokenOf(meta: unknown): ProgressToken | undefined {
  const token = (meta as { progressToken?: unknown } | undefined)?.progressToken;
  return typeof token === "string" || (typeof token === "number" && Number.isInteger(token)) ? token : undefined;
}

/** `dirs 120, files 3400, bytes 5242880`: a report's own message, else its plain fields. */
function messageOf(report: Report): string {
  const text =
    typeof report.message === "string"
      ? report.message
      : Object.entries(report)
          .filter(
            ([key, v]) => key !== "progress" && key !== "total" && ["string", "number", "boolean"].includes(typeof v),
          )
          .map(([key, v]) => `${key} ${v}`)
          .join(", ");
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > PROGRESS_MESSAGE_CHARS ? `${line.slice(0, PROGRESS_MESSAGE_CHARS - 1)}…` : line;
}

const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

export function progressReporter(
  token: ProgressToken,
  send: (params: ProgressParams) => void,
  everyMs = PROGRESS_EVERY_MS,
): ProgressReporter {
  let last = 0;
  let lastSentAt = Number.NEGATIVE_INFINITY;
  let kept: Report | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const report = kept;
    kept = undefined;
    if (!report || closed) return;
    last = finite(report.progress) && report.progress > last ? report.progress : last + 1;
    lastSentAt = performance.now();
    const params: ProgressParams = { progressToken: token, progress: last };
    if (finite(report.total) && report.total >= last) params.total = report.total;
    const message = messageOf(report);
    if (message) params.message = message;
    send(params);
  };

  return {
    report(progress) {
      if (closed) return;
      kept = progress;
      const wait = lastSentAt + everyMs - performance.now();
      if (wait <= 0) flush();
      else timer ??= setTimeout(flush, wait);
    },
    finish() {
      if (closed) return;
      flush();
      closed = true;
    },
  };
}
