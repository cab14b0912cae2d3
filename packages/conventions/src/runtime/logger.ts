/** The one logger: pino, JSON lines, secrets redacted, on stderr in stdio mode (stdout is protocol there). */
import { type Logger, pino } from "pino";

export type { Logger };

export const REDACT_PATHS = [
  "req.headers.authorization",
  "req.headers.cookie",
  'req.headers["proxy-authorization"]',
  'res.headers["set-cookie"]',
  "headers.authorization",
  "headers.cookie",
  "*.token",
  "*.password",
  "*.secret",
  "AUTH_TOKEN",
  "config.AUTH_TOKEN",
];

export interface LoggerOptions {
  name: string;
  level?: string;
  /** File descriptor: 1 (stdout) for HTTP mode, 2 (stderr) in stdio mode where stdout is protocol. */
  destination?: number;
}

/**
 * An error's `type` in a log line is its own `name`, not its constructor's: a server's bundle is minified
 * (ADR 0067), so `DiagError`'s class is called something like `L` there. Every error class of ours names itself.
 */
const errByName = pino.stdSerializers.wrapErrorSerializer((err) => {
  const raw: unknown = err.raw;
  if (raw instanceof Error && typeof raw.name === "string") err.type = raw.name;
  return err;
});

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      name: options.name,
      level: options.level ?? "info",
      serializers: { err: errByName },
      redact: { paths: REDACT_PATHS, censor: "[masked]" },
      base: { name: options.name },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    pino.destination({ fd: options.destination ?? 1, sync: false }),
  );
}
