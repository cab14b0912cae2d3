import { pino } from "pino";
import type { Logger } from "../runtime/logger.ts";

/** A logger that writes nothing: tests read results, not log lines. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
