/**
 * One entry of `journalctl --output=json` as one line a person reads: `<ISO time> <identifier>[<pid>]: <message>`,
 * like `--output=short-iso`. MESSAGE may be a string, an array of bytes (not valid UTF-8) or null (journalctl
 * leaves out fields over 4 KiB). Multi-line messages are joined with ` ⏎ `; secrets are masked, then the line is
 * cut.
 */
import { cutText, maskText } from "@roadnerd/conventions";
import { isoFromMicros } from "./timestamp.ts";

/** Fields asked for with --output-fields (journalctl always adds its cursor and timestamps). */
export const JOURNAL_FIELDS = "MESSAGE,SYSLOG_IDENTIFIER,_COMM,_PID,SYSLOG_PID";
export const MAX_LINE_CHARS = 400;

function messageText(value: unknown): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value) && value.every((b) => typeof b === "number")) {
    return Buffer.from(value as number[]).toString("utf8");
  }
  if (value === null) return "[message over 4 KiB, left out by journalctl]";
  return "";
}

/** A formatted line, or undefined for a line that is not a journal entry. */
export function journalLine(raw: string, maxChars = MAX_LINE_CHARS): string | undefined {
  let entry: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return undefined;
    entry = parsed as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const at = isoFromMicros(entry.__REALTIME_TIMESTAMP) ?? "-";
  const ident = [entry.SYSLOG_IDENTIFIER, entry._COMM].find((v) => typeof v === "string" && v) ?? "-";
  const pid = [entry._PID, entry.SYSLOG_PID].find((v) => typeof v === "string" && /^\d+$/.test(v));
  const message = messageText(entry.MESSAGE)
    .replace(/\s*[\r\n]+\s*/g, " ⏎ ")
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we remove
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "")
    .trim();
  return cutText(maskText(`${at} ${String(ident)}${pid ? `[${pid}]` : ""}: ${message}`), maxChars);
}
