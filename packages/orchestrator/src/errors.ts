/**
 * The orchestrator's own failures, beside the servers' codes (which pass through unchanged): attaching a
 * server, a planner reply that is not one valid call, a planner that fails, a command line it cannot use.
 * Match on `code`.
 */
import { maskText } from "@roadnerd/conventions";
import { ERROR_STATUS } from "@roadnerd/conventions/internal";

export const ORCHESTRATOR_CODES = [
  /** The server could not be started, never became healthy, or a configured URL did not answer. */
  "E_ATTACH",
  /** The reply was not exactly one JSON object. */
  "E_NOT_ONE_JSON",
  /** The JSON object is not {"tool","params"} nor {"label","reason"}. */
  "E_BAD_SHAPE",
  /** No tool by that name, or a near miss that fits several tools. */
  "E_UNKNOWN_TOOL",
  /** The params do not pass the tool's own input schema. */
  "E_INVALID_INPUT",
  /** A label outside the closed set. */
  "E_BAD_LABEL",
  /** The model endpoint answered an error, or not what an OpenAI-compatible endpoint answers. */
  "E_PLANNER",
  /** A command line, script file or environment the orchestrator cannot use. */
  "E_USAGE",
] as const;

export type OrchestratorCode = (typeof ORCHESTRATOR_CODES)[number];

/** `tls`: a host's server answered with a certificate its CA file does not vouch for, or refused ours. */
export type AttachPhase = "spawn" | "listen" | "health" | "remote" | "tls";

export class AttachError extends Error {
  readonly code = "E_ATTACH" as const;
  readonly server: string;
  readonly phase: AttachPhase;
  readonly hint: string | undefined;
  constructor(server: string, phase: AttachPhase, message: string, hint?: string) {
    // Masked once more here: a URL's userinfo (a credential) never reaches a message, a log or a client.
    super(maskText(`attach ${server} (${phase}): ${message}`));
    this.name = "AttachError";
    this.server = server;
    this.phase = phase;
    this.hint = hint;
  }
}

/**
 * A call the gateway could not complete for reasons of the plumbing, not of the tool: the server's deadline
 * passed with no answer (E_TIMEOUT), or its connection failed under the call (E_ATTACH). Never E_INTERNAL.
 */
export class CallError extends Error {
  override readonly name = "CallError";
  readonly code: "E_TIMEOUT" | "E_ATTACH";
  readonly hint: string | undefined;
  constructor(code: "E_TIMEOUT" | "E_ATTACH", message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(maskText(message), { cause: options.cause });
    this.code = code;
    this.hint = options.hint === undefined ? undefined : maskText(options.hint);
  }
}

/** A command line, script file or environment that cannot be used: said in one line, exit 2. */
export class UsageError extends Error {
  readonly code = "E_USAGE" as const;
  override readonly name = "UsageError";
}

export interface ErrorInfo {
  code: string;
  message: string;
  /** The server's hint: what to do next. */
  hint?: string;
}

/** A property of anything thrown, without assuming what it is. */
export const fieldOf = (err: unknown, key: string): unknown =>
  typeof err === "object" && err !== null ? Reflect.get(err, key) : undefined;

/** Code, message and hint from anything a call threw: RemoteError, AttachError, DiagError… else E_INTERNAL. */
export function errorInfo(err: unknown): ErrorInfo {
  const code = fieldOf(err, "code");
  const message = fieldOf(err, "message");
  const hint = fieldOf(err, "hint");
  const info: ErrorInfo = {
    code: typeof code === "string" && /^E_[A-Z_]+$/.test(code) ? code : "E_INTERNAL",
    message: typeof message === "string" ? message : String(err),
  };
  return typeof hint === "string" ? { ...info, hint } : info;
}

const KERNEL_STATUS = new Map<string, number>(Object.entries(ERROR_STATUS));

/**
 * The HTTP status of an error code, as a server's /actions answers it (the kernel's ERROR_STATUS); E_ATTACH is
 * a bad gateway (the server behind us failed), any other code of ours a 500.
 */
export function httpStatusOf(code: string): number {
  return KERNEL_STATUS.get(code) ?? (code === "E_ATTACH" ? 502 : 500);
}
