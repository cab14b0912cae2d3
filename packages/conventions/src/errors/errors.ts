/** The closed set of error codes every RoadNerd server speaks, and the one factory that makes them. */

import { maskText } from "../runtime/mask.ts";

export const ERROR_CODES = [
  "E_INVALID_INPUT",
  "E_UNKNOWN_TOOL",
  "E_FORBIDDEN",
  "E_UNAUTHORIZED",
  "E_UNSUPPORTED",
  "E_NO_BINARY",
  "E_TIMEOUT",
  "E_DNS_FAIL",
  "E_CONN_REFUSED",
  "E_UNREACHABLE",
  "E_TLS",
  "E_BUSY",
  "E_TOO_LARGE",
  "E_EXEC_FAILED",
  "E_INTERNAL",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** HTTP status for each code; `Record` makes the compiler check the map is complete. */
export const ERROR_STATUS: Record<ErrorCode, number> = {
  E_INVALID_INPUT: 400,
  E_UNKNOWN_TOOL: 404,
  E_FORBIDDEN: 403,
  E_UNAUTHORIZED: 401,
  E_UNSUPPORTED: 501,
  E_NO_BINARY: 424,
  E_TIMEOUT: 504,
  E_DNS_FAIL: 502,
  E_CONN_REFUSED: 502,
  E_UNREACHABLE: 502,
  E_TLS: 502,
  E_BUSY: 503,
  E_TOO_LARGE: 413,
  E_EXEC_FAILED: 502,
  E_INTERNAL: 500,
};

/** One line per code: the error table in docs is generated from this and diffed in tests. */
export const ERROR_MEANING: Record<ErrorCode, string> = {
  E_INVALID_INPUT: "The input did not match the tool's schema; the message says what and gives a valid example.",
  E_UNKNOWN_TOOL: "No tool or stream by that name; the hint lists the closest names.",
  E_FORBIDDEN: "The target (host, address, Host/Origin header) is denied by policy.",
  E_UNAUTHORIZED: "AUTH_TOKEN is set and the request did not carry it as a bearer token.",
  E_UNSUPPORTED: "Not available here: a mutating method, a command outside the allowlist, or a missing capability.",
  E_NO_BINARY: "The command this needs is not installed; the message names it.",
  E_TIMEOUT: "The work did not finish within timeout_ms.",
  E_DNS_FAIL: "A name did not resolve (as a result field: the diagnosis, not a failure of the call).",
  E_CONN_REFUSED: "The target refused the connection (as a result field: the diagnosis).",
  E_UNREACHABLE: "No route to the target: host or network unreachable (as a result field: the diagnosis).",
  E_TLS: "The TLS handshake failed: no common protocol, certificate refused (as a result field: the diagnosis).",
  E_BUSY: "The server is at its bound of concurrent calls or open streams; retry after the Retry-After seconds.",
  E_TOO_LARGE:
    "The request body is over the limit (tool inputs are small); it is not read past it, and the connection is closed.",
  E_EXEC_FAILED:
    "A program the tool runs could not start or was ended by a signal from elsewhere; the message names it.",
  E_INTERNAL: "A bug on our side; never carries a stack trace.",
};

export interface ErrorBody {
  error: { code: ErrorCode; message: string; hint?: string | undefined };
  run_id?: string | undefined;
}

export interface DiagErrorOptions {
  hint?: string | undefined;
  cause?: unknown;
  /** For E_BUSY: when to try again (the Retry-After header). */
  retryAfterS?: number | undefined;
}

/** Codes whose message may quote a subprocess's stderr or output (`journalctl exited with 1: …`). */
const PROGRAM_OUTPUT_CODES: ReadonlySet<ErrorCode> = new Set(["E_EXEC_FAILED", "E_UNSUPPORTED"]);

/**
 * maskText of the last few short messages: the same diagnosis answered again (E_UNSUPPORTED on every call of a
 * machine without systemd) costs one lookup, not some forty regex passes. Bounded; the masked text is the same.
 */
const MASKED_MEMO_MAX = 32;
const MASKED_MEMO_MAX_CHARS = 512;
const maskedMemo = new Map<string, string>();
function maskedMessage(message: string): string {
  if (message.length > MASKED_MEMO_MAX_CHARS) return maskText(message);
  let masked = maskedMemo.get(message);
  if (masked === undefined) {
    masked = maskText(message);
    if (maskedMemo.size >= MASKED_MEMO_MAX) maskedMemo.delete(maskedMemo.keys().next().value as string);
    maskedMemo.set(message, masked);
  }
  return masked;
}

export class DiagError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly retryAfterS: number | undefined;
  constructor(code: ErrorCode, message: string, options?: DiagErrorOptions) {
    // A program's failure quotes what it said (stderr, output): masked like any text we echo.
    const shown = PROGRAM_OUTPUT_CODES.has(code) ? maskedMessage(message) : message;
    // A diagnosis is an answer, not a bug: no stack is captured for it (the capture was most of a refused call's
    // cost, and no answer or log line shows it). E_INTERNAL keeps its stack for the log, beside its cause's.
    const limit = Error.stackTraceLimit;
    if (code !== "E_INTERNAL") Error.stackTraceLimit = 0;
    try {
      super(shown, options?.cause === undefined ? undefined : { cause: options.cause });
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.name = "DiagError";
    this.code = code;
    this.hint = options?.hint;
    this.retryAfterS = options?.retryAfterS;
  }
  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/** Anything thrown becomes a DiagError; unknown errors become E_INTERNAL with the cause kept (for logs only). */
export function toDiagError(err: unknown): DiagError {
  if (err instanceof DiagError) return err;
  // Fastify's own errors (bad JSON, body too large, wrong content type) are client errors.
  const e = err as { statusCode?: number; code?: string; message?: string } | null;
  if (e && typeof e.statusCode === "number" && e.statusCode >= 400 && e.statusCode < 500) {
    return new DiagError("E_INVALID_INPUT", cleanFastifyMessage(e.message ?? "bad request"), { cause: err });
  }
  return new DiagError("E_INTERNAL", "internal error", { cause: err });
}

function cleanFastifyMessage(message: string): string {
  return message.replace(/^FST_[A-Z_]+:\s*/, "").slice(0, 200);
}

export function errorBody(err: DiagError, runId?: string): ErrorBody {
  const body: ErrorBody = { error: { code: err.code, message: err.message } };
  if (err.hint) body.error.hint = err.hint;
  if (runId) body.run_id = runId;
  return body;
}
