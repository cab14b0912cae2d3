/**
 * A triage outcome for a person: the verdict once, then each tool call once (what it showed, how long it took),
 * then where the log is. `--json` prints the whole report instead, with the step lines on stderr.
 */
import type { TriageOutcome } from "../triage.ts";
import type { StepLine } from "../triage-log.ts";

export function triageText(outcome: TriageOutcome, steps: readonly StepLine[]): string {
  // The call steps' lines, in order: the n-th is the n-th piece of evidence.
  const calls = steps.filter((s) => s.requested_tool !== null);
  const lines = [`${outcome.label}: ${outcome.reason}`];
  outcome.evidence.forEach((e, i) => {
    const shown = e.ok ? e.summary || "ok" : `${e.error?.code ?? "failed"}: ${e.error?.message ?? ""}`;
    lines.push(`  ${i + 1}. ${e.tool}: ${shown.replace(/\s*\n\s*/g, " ")}${timing(calls[i])}`);
  });
  if (outcome.evidence.length === 0) lines.push("  (no tool called)");
  if (outcome.log_path) lines.push(`  log: ${outcome.log_path}`);
  return lines.join("\n");
}

/** ` (529 ms, attached in 481 ms)`: the call's time and what came with it. */
function timing(s: StepLine | undefined): string {
  if (!s) return "";
  const how = [
    `${s.duration_ms} ms`,
    s.attached ? `attached in ${s.attach_ms ?? 0} ms` : "",
    s.resolved_from ? `asked as ${s.resolved_from}` : "",
    s.repaired ? "repaired" : "",
    s.restarted ? "restarted" : "",
  ].filter(Boolean);
  return ` (${how.join(", ")})`;
}
