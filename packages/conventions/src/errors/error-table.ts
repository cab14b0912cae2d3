/** The error table for docs/errors.md, generated from the code so the two cannot drift. */
import { ERROR_CODES, ERROR_MEANING, ERROR_STATUS } from "./errors.ts";

export function renderErrorTable(): string {
  const rows = ERROR_CODES.map((c) => `| \`${c}\` | ${ERROR_STATUS[c]} | ${ERROR_MEANING[c]} |`);
  return ["| code | HTTP status | meaning |", "| --- | --- | --- |", ...rows].join("\n");
}
