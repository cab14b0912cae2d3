/** Writing to the terminal: results on stdout, progress and errors on stderr (no console in src). */
import type { StepLine } from "../triage-log.ts";

/** A status line on a terminal's stderr that the next write replaces (live progress that leaves no trace). */
let showing = false;
const CLEAR = "\r\x1b[K";

export const out = (text: string) => {
  clearStatus();
  process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
};
export const err = (text: string) => {
  clearStatus();
  process.stderr.write(text.endsWith("\n") ? text : `${text}\n`);
};

/** Shows `text` as the live status when stderr is a terminal; elsewhere (a pipe, a file) nothing. */
export function status(text: string): void {
  if (!process.stderr.isTTY) return;
  const width = Math.max((process.stderr.columns || 80) - 1, 20);
  process.stderr.write(`${CLEAR}${text.length > width ? `${text.slice(0, width - 1)}…` : text}`);
  showing = true;
}

export function clearStatus(): void {
  if (!showing) return;
  process.stderr.write(CLEAR);
  showing = false;
}

/**
 * An error for `--json`: one object on stdout, `{"error":{"code","message","hint"?}}` — the servers' HTTP error
 * body — so a machine reads one JSON document from stdout whatever happened, and the exit code says which.
 */
export function errorJson(e: { code: string; message: string; hint?: string | undefined }): string {
  return JSON.stringify({ error: { code: e.code, message: e.message, ...(e.hint ? { hint: e.hint } : {}) } });
}

/** An error as one line with its fix: `E_CODE: what happened (what to do)`. */
export function oneLine(e: { code: string; message: string; hint?: string | undefined }): string {
  const message = e.message.replace(/\s*\n\s*/g, " ");
  return `${e.code}: ${message}${e.hint ? ` (${e.hint.replace(/\s*\n\s*/g, " ")})` : ""}`;
}

/** A triage step for the progress output: `step N` counts tool calls, as `--json`'s `steps` does. */
export function stepLine(s: StepLine): string {
  if (s.requested_tool === null) {
    const fix = s.repaired ? " (after a repair)" : "";
    return s.error_code
      ? `verdict: no valid reply${fix}: ${s.error_code}`
      : `verdict: ${s.label}${fix}: ${s.reason ?? ""}`;
  }
  const how = [
    s.resolved_from ? `asked as ${s.resolved_from}` : "",
    s.repaired ? "repaired" : "",
    s.attached ? `attached in ${s.attach_ms ?? 0} ms` : "",
    s.restarted ? "restarted" : "",
  ].filter(Boolean);
  const result = s.call_ok ? "ok" : `failed ${s.error_code ?? ""}`;
  return `step ${s.step}: ${s.requested_tool}${how.length ? ` (${how.join(", ")})` : ""} → ${result} in ${s.duration_ms} ms`;
}
