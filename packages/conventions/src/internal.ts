/**
 * @roadnerd/conventions/internal — the kernel's own parts, for the scripts, the registry, the orchestrator
 * and the kernel's tests. A server author should not need anything here.
 */

export { type Capabilities, detectCapabilities, detectContainer } from "./capabilities.ts";
export { buildArgv, checkAllowed, matchesTemplate } from "./command.ts";
export { baseEnvShape, DEFAULT_EXEC_PATH, DEFAULT_HOST, loadConfig } from "./config.ts";
export { renderErrorTable } from "./error-table.ts";
export { ERROR_CODES, ERROR_MEANING, ERROR_STATUS, type ErrorBody, errorBody, toDiagError } from "./errors.ts";
export {
  createExec,
  createExecLines,
  DEFAULT_EXEC_MAX_BYTES,
  DEFAULT_MAX_LINE_CHARS,
  type Exec,
  type ExecLines,
  type ExecOptions,
  type LinesOptions,
  liveProcessGroups,
  spawnLines,
} from "./exec.ts";
export { commonInputShape, MIN_TIMEOUT_MS, runIdField } from "./fields.ts";
export {
  checkRequest,
  type GuardOptions,
  hasValidToken,
  hostnameOf,
  isAllowedHost,
  isAllowedOrigin,
} from "./guards.ts";
export { buildApp, buildHttpApp } from "./http-app.ts";
export { MAX_INPUT_STRING } from "./input-errors.ts";
export { createLogger } from "./logger.ts";
export { buildOpenApi } from "./openapi.ts";
export {
  createOutboundPolicy,
  type OutboundConfig,
  toProbeFailure,
  unwrapIPv4,
} from "./outbound/index.ts";
export { renderMetadataTable } from "./outbound/metadata.ts";
export { runStream, type StreamEnd } from "./run-stream.ts";
export { parseInput, runParsedTool, runTool } from "./run-tool.ts";
export { createRuntime, type Runtime, type RuntimeOptions } from "./runtime.ts";
export { inputJsonSchema, type JsonSchema, outputJsonSchema } from "./schemas.ts";
export { renderServerReference } from "./server-docs.ts";
export { parseServerPackage, SERVER_NAME, type ServerIdentity } from "./server-package.ts";
export { DEFAULT_STREAM_DURATION_MS, MAX_STREAM_DURATION_MS, PING_INTERVAL_MS } from "./stream.ts";
