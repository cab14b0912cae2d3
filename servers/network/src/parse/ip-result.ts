/** One place that turns an `ip -j …` run into JSON text or a typed error, for every tool that reads iproute2. */
import { DiagError, type ExecResult } from "@roadnerd/conventions";

export function ipOutput(result: ExecResult, what: string): string {
  if (result.exitCode !== 0) {
    throw new DiagError(
      "E_UNSUPPORTED",
      `${what} failed (exit ${result.exitCode}): ${result.stderr.trim().slice(0, 160)}`,
    );
  }
  // Cut JSON cannot be parsed: say so instead of a parse error.
  if (result.truncated) throw new DiagError("E_INTERNAL", `${what} printed more than the output cap`);
  return result.stdout;
}

export function parseIpJson<T>(result: ExecResult, what: string, parse: (json: string) => T): T {
  const text = ipOutput(result, what);
  try {
    return parse(text);
  } catch (err) {
    throw new DiagError("E_INTERNAL", `could not parse ${what} output`, { cause: err });
  }
}
