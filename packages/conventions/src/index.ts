/** @roadnerd/conventions — the kernel every RoadNerd server is built from. Named exports only. */
export { type Capabilities, detectCapabilities, detectContainer } from "./capabilities.ts";
export { type BaseConfig, baseEnvShape, DEFAULT_EXEC_PATH, DEFAULT_HOST, loadConfig } from "./config.ts";
export { renderErrorTable } from "./error-table.ts";
export {
  DiagError,
  ERROR_CODES,
  ERROR_MEANING,
  ERROR_STATUS,
  type ErrorBody,
  type ErrorCode,
  errorBody,
  toDiagError,
} from "./errors.ts";
export {
  type ArgShape,
  type ArgSlot,
  checkAllowed,
  createExec,
  DEFAULT_EXEC_MAX_BYTES,
  type Exec,
  type ExecAllowlist,
  type ExecOptions,
  type ExecResult,
  slot,
} from "./exec.ts";
export {
  commonInputShape,
  DEFAULT_TIMEOUT_MS,
  hostField,
  hostnameField,
  httpUrlField,
  ipField,
  isHostname,
  MAX_TIMEOUT_MS,
  MIN_TIMEOUT_MS,
  portField,
} from "./fields.ts";
export {
  checkRequest,
  type GuardOptions,
  hasValidToken,
  hostnameOf,
  isAllowedHost,
  isAllowedOrigin,
} from "./guards.ts";
export { MAX_INPUT_STRING } from "./input-errors.ts";
export {
  type Capped,
  capList,
  cutText,
  DEFAULT_LIST_LIMIT,
  limitInput,
  MAX_LIST_LIMIT,
  oneLine,
  truncationFields,
} from "./limits.ts";
export { createLogger, type Logger } from "./logger.ts";
export { runMain } from "./main.ts";
export { isSecretHeader, MASK, maskHeaders, maskText, maskUrl } from "./mask.ts";
export { buildOpenApi } from "./openapi.ts";
export {
  type ChainStop,
  createOutboundPolicy,
  DEFAULT_BODY_PREFIX_BYTES,
  DEFAULT_MAX_REDIRECTS,
  DIAGNOSIS_CODES,
  type DiagnosisCode,
  type HopFailure,
  type HopResponse,
  type HopResult,
  type HopTiming,
  type HttpProbeOptions,
  type HttpProbeResult,
  type HttpRequestOptions,
  httpProbe,
  httpRequest,
  isRedirectStatus,
  MAX_REDIRECTS,
  type OutboundConfig,
  type OutboundPolicy,
  PROBE_USER_AGENT,
  type ProbeFailure,
  type ProbeMethod,
  type ProbePhase,
  type ResolvedTarget,
  type TlsFacts,
  toProbeFailure,
  UNREACHABLE_REASONS,
} from "./outbound/index.ts";
export { type BaseContext, parseToolInput, runTool, type ToolResult } from "./run-tool.ts";
export { inputJsonSchema, type JsonSchema, outputJsonSchema } from "./schemas.ts";
export {
  BODY_LIMIT_BYTES,
  baseContext,
  buildApp,
  defineServer,
  type ServerConfig,
  type ServerDef,
  type ServerSpec,
  serverConfig,
} from "./server.ts";
export { renderServerReference } from "./server-docs.ts";
export { type AnyStream, defineStream, type Stream, type StreamContext } from "./stream.ts";
export { type AnyTool, defineTool, type Tool, type ToolContext } from "./tool.ts";
