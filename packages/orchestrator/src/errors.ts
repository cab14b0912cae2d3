/**
 * The orchestrator's own failures, beside the servers' codes (which pass through unchanged): attaching a
 * server, and a planner reply that is not one valid call. Match on `code`.
 */
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
] as const;

export type OrchestratorCode = (typeof ORCHESTRATOR_CODES)[number];

export type AttachPhase = "spawn" | "listen" | "health" | "remote";

export class AttachError extends Error {
  readonly code = "E_ATTACH" as const;
  readonly server: string;
  readonly phase: AttachPhase;
  constructor(server: string, phase: AttachPhase, message: string) {
    super(`attach ${server} (${phase}): ${message}`);
    this.name = "AttachError";
    this.server = server;
    this.phase = phase;
  }
}

/** Code, message and the server's hint (what to do next) from anything a call threw: RemoteError, AttachError, DiagError… */
export function errorInfo(err: unknown): { code: string; message: string; hint?: string } {
  const e = err as { code?: unknown; message?: unknown; hint?: unknown };
  const code = typeof e?.code === "string" && /^E_[A-Z_]+$/.test(e.code) ? e.code : "E_INTERNAL";
  const message = typeof e?.message === "string" ? e.message : String(err);
  return typeof e?.hint === "string" ? { code, message, hint: e.hint } : { code, message };
}
