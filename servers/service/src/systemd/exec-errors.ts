/** A systemctl or journalctl that exited non-zero: what it said, as one of our codes. */
import { DiagError, type ExecResult, oneLine } from "@roadnerd/conventions";

/** systemctl's and journalctl's words for "no systemd to talk to" (not booted with it, or its bus is gone). */
const NOT_RUNNING = /not been booted with systemd|Failed to connect to bus|Host is down|System has not been booted/i;

export function execFailure(what: string, result: ExecResult): DiagError {
  const said = oneLine(result.stderr || result.stdout || "no output", 200);
  if (NOT_RUNNING.test(result.stderr)) {
    return new DiagError("E_UNSUPPORTED", `systemd is not reachable here: ${what} said: ${said}`, {
      hint: "a container or a machine with another init has no systemd units; ask the host instead",
    });
  }
  return new DiagError("E_EXEC_FAILED", `${what} exited with ${result.exitCode}: ${said}`);
}
