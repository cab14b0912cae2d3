/**
 * @roadnerd/conventions/internal — the kernel's own parts, for the scripts, the registry, the orchestrator
 * and the kernel's tests. A server author should not need anything here.
 */

export { buildArgv, checkAllowed, matchesTemplate } from "./define/command.ts";
export { baseEnvShape, DEFAULT_EXEC_PATH, DEFAULT_HOST, loadConfig } from "./define/config.ts";
export { commonInputShape, MIN_TIMEOUT_MS, runIdField } from "./define/fields.ts";
export { inputJsonSchema, type JsonSchema, outputJsonSchema } from "./define/schemas.ts";
export { parseServerPackage, SERVER_NAME, type ServerIdentity } from "./define/server-package.ts";
export { DEFAULT_STREAM_DURATION_MS, MAX_STREAM_DURATION_MS, PING_INTERVAL_MS } from "./define/stream.ts";
export { renderServerReference } from "./docs/server-docs.ts";
export { renderErrorTable } from "./errors/error-table.ts";
export { ERROR_CODES, ERROR_MEANING, ERROR_STATUS, type ErrorBody, errorBody, toDiagError } from "./errors/errors.ts";
export { MAX_INPUT_STRING } from "./errors/input-errors.ts";
export {
  checkRequest,
  type GuardOptions,
  hasValidToken,
  hostnameOf,
  isAllowedHost,
  isAllowedOrigin,
} from "./http/guards.ts";
export { buildApp, buildHttpApp } from "./http/http-app.ts";
export { buildOpenApi } from "./http/openapi.ts";
export { listedTool, type McpTool, type McpToolSource } from "./mcp/adapter.ts";
export { RPC, rpcError, transportErrorBody } from "./mcp/rpc.ts";
export { answerMcpPost, type McpAnswer, serveStdioSource } from "./mcp/transports.ts";
export {
  createOutboundPolicy,
  type OutboundConfig,
  toProbeFailure,
  unwrapIPv4,
} from "./outbound/index.ts";
export { renderMetadataTable } from "./outbound/metadata.ts";
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
} from "./process/exec.ts";
export { type Capabilities, detectCapabilities, detectContainer } from "./runtime/capabilities.ts";
export { createLogger } from "./runtime/logger.ts";
export { runStream, type StreamEnd } from "./runtime/run-stream.ts";
export { parseInput, runParsedTool, runTool } from "./runtime/run-tool.ts";
export { createRuntime, type Runtime, type RuntimeOptions } from "./runtime/runtime.ts";
