/** One place that turns an `ip -j …` run into JSON text or a typed error, for every tool that reads iproute2. */
import { DiagError, type ExecResult } from "@roadnerd/conventions";

export function ipOutput(result: ExecResult, what: string): string {
  // First: a run cut at the output cap was ended by us (its exit code says so, not what ip thinks), and cut
  // JSON cannot be parsed. The program's output is what failed, not this server and not the machine's support.
  if (result.truncated) {
    throw new DiagError("E_EXEC_FAILED", `${what} printed more than the output cap: its answer was cut`, {
      hint: "ask for less (an interface, a family) and try again",
    });
  }
  if (result.exitCode !== 0) {
    throw new DiagError(
      "E_UNSUPPORTED",
      `${what} failed (exit ${result.exitCode}): ${result.stderr.trim().slice(0, 160)}`,
    );
  }
  return result.stdout;
}

export function parseIpJson<T>(result: ExecResult, what: string, parse: (json: string) => T): T {
  const text = ipOutput(result, what);
  try {
    return parse(text);
  } catch (err) {
    // Not our bug: the installed ip printed something that is not the JSON iproute2 documents.
    throw new DiagError("E_EXEC_FAILED", `could not parse ${what} output: not the JSON iproute2 prints`, {
      cause: err,
      hint: "check `ip -V`: iproute2 before 4.14 prints no JSON",
    });
  }
}
