/** Writing to the terminal: results on stdout, progress and errors on stderr (no console in src). */
import type { StepLine } from "../triage-log.ts";

export const out = (text: string) => process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
export const err = (text: string) => process.stderr.write(text.endsWith("\n") ? text : `${text}\n`);

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
