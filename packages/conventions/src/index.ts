/**
 * @roadnerd/conventions — what a server author imports: a typed kit (defineTool, defineStream, defineServer),
 * commands, shared input fields, output limits, masking, the outbound HTTP probe, errors and runMain.
 * Everything else is the kernel's own (`@roadnerd/conventions/internal`); test helpers are in
 * `@roadnerd/conventions/testing`. Named exports only.
 */
export { type ArgSlot, type Command, command, type SlotValues, slot } from "./define/command.ts";
export type { BaseConfig } from "./define/config.ts";
export {
  DEFAULT_TIMEOUT_MS,
  hostField,
  hostnameField,
  httpUrlField,
  ipField,
  isHostname,
  MAX_TIMEOUT_MS,
  portField,
} from "./define/fields.ts";
export { type ConfigOf, createKit, defineServer, type Kit } from "./define/kit.ts";
export {
  type Capped,
  capList,
  cutText,
  DEFAULT_LIST_LIMIT,
  limitInput,
  MAX_LIST_LIMIT,
  oneLine,
  truncationFields,
} from "./define/limits.ts";
export type { ServerDef, ServerSpec } from "./define/server-def.ts";
export {
  type AnyStream,
  defineStream,
  type LinesCallOptions,
  type MessageOf,
  type Stream,
  type StreamContext,
  type StreamExecLines,
} from "./define/stream.ts";
export { type AnyTool, defineTool, type InputOf, type ResultOf, type Tool, type ToolContext } from "./define/tool.ts";
export { DiagError, type ErrorCode } from "./errors/errors.ts";
export {
  classifySocketError,
  DEADLINE_MARGIN_MS,
  DIAGNOSIS_CODES,
  type DiagnosisCode,
  hostPort,
  type SocketFailure,
  type SocketFailureKind,
  UNREACHABLE_REASONS,
} from "./errors/socket-errors.ts";
export { runMain } from "./main.ts";
export {
  type ChainStop,
  DEFAULT_BODY_PREFIX_BYTES,
  DEFAULT_MAX_REDIRECTS,
  type DialAttempt,
  DialError,
  type Dialed,
  type DialPhase,
  dial,
  dialUdp,
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
  type OutboundPolicy,
  type PhaseTiming,
  PROBE_USER_AGENT,
  type ProbeAnswer,
  type ProbeFailure,
  type ProbeMethod,
  type ProbePhase,
  portOf,
  probeAnswer,
  proxyRefusal,
  type ResolvedTarget,
  spanMs,
  type TlsFacts,
  timingMsField,
} from "./outbound/index.ts";
export type { ExecResult, LineProcess, LinesEnd } from "./process/exec.ts";
export {
  DEFAULT_LISTEN_TIMEOUT_MS,
  liveSupervised,
  SUPERVISE_KILL_GRACE_MS,
  type Supervised,
  type SupervisedExit,
  SuperviseError,
  type SuperviseOptions,
  superviseListening,
} from "./process/supervise.ts";
export { createLimiter, type Limiter, type Release } from "./runtime/limiter.ts";
export type { Logger } from "./runtime/logger.ts";
export {
  isSecretHeader,
  MASK,
  maskArgv,
  maskCommandLine,
  maskHeaders,
  maskText,
  maskUrl,
  shownUrl,
} from "./runtime/mask.ts";
