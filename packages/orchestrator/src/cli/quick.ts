/**
 * `roadnerd --help`, `roadnerd help call`, `roadnerd call --help`, `roadnerd --version`: answered before the
 * CLI loads the catalog, zod and the MCP SDK (0.4 s of CPU that help never needed). Only these exact shapes;
 * anything else, `help nope` included, goes through the full parser (args.ts), which says what is wrong.
 */
import pkg from "../../package.json" with { type: "json" };
import { EXIT } from "./exit-codes.ts";
import { commandHelp, HELP, isHelpTopic } from "./help.ts";

const HELP_FLAGS = new Set(["--help", "-h"]);
const VERSION_WORDS = new Set(["--version", "-V", "version"]);

/** The text and exit code for a help or version line, or undefined for any other line. */
export function quickAnswer(argv: readonly string[]): { text: string; code: number } | undefined {
  const [first, second, ...rest] = argv;
  if (rest.length > 0) return undefined;
  if (first === undefined) return { text: HELP, code: EXIT.usage };
  if (second === undefined) {
    if (HELP_FLAGS.has(first) || first === "help") return { text: HELP, code: EXIT.ok };
    if (VERSION_WORDS.has(first)) return { text: `roadnerd ${pkg.version}`, code: EXIT.ok };
    return undefined;
  }
  if (first === "help" && isHelpTopic(second)) return { text: commandHelp(second), code: EXIT.ok };
  if (isHelpTopic(first) && HELP_FLAGS.has(second)) return { text: commandHelp(first), code: EXIT.ok };
  return undefined;
}
