/**
 * The one table of exit codes every `roadnerd` command answers with (README, "Exit codes"). A code is chosen
 * by what went wrong, not by who noticed it: a params check the CLI makes and the same check a server makes
 * (E_INVALID_INPUT) both exit 2.
 */
export const EXIT = {
  /** Done: a result, a label (`unknown` included), every server stopped cleanly after Ctrl-C. */
  ok: 0,
  /** The work failed: a tool call (timeout, refused target, attach…), a server or the gateway that did not start, an evaluation label that was wrong. */
  failed: 1,
  /** Usage or invalid input: a flag, command, key=value pair, tool, server, scenario, script or environment that does not fit, whether the CLI or a server says so. */
  usage: 2,
  /** A one-shot command (list, call, triage) stopped by SIGINT, SIGTERM or SIGHUP. */
  interrupted: 130,
} as const;

/** Codes that mean the caller asked wrongly, wherever they are caught: the CLI, a reply check, a server. */
const USAGE_CODES: ReadonlySet<string> = new Set([
  "E_USAGE",
  "E_INVALID_INPUT",
  "E_UNKNOWN_TOOL",
  "E_NOT_ONE_JSON",
  "E_BAD_SHAPE",
  "E_BAD_LABEL",
]);

export function exitCodeFor(code: string): number {
  return USAGE_CODES.has(code) ? EXIT.usage : EXIT.failed;
}
