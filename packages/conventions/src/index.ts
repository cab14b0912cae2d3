/**
 * @roadnerd/conventions — what a server author imports, and nothing else: the typed kit (`createKit` gives a
 * server its defineTool, defineStream and defineServer), commands, shared input fields, output limits, errors,
 * the outbound HTTP probe, masking and runMain. The kernel's own parts are `@roadnerd/conventions/internal`,
 * the orchestrator's process supervision `@roadnerd/conventions/supervise`, test helpers
 * `@roadnerd/conventions/testing`. Named exports only; test/exports.test.ts pins each list.
 */
import "./define/zod-jitless.ts";

export {
  askSystemd,
  type BusReply,
  BusUnavailable,
  getProperty,
  MANAGER_PATH,
  privateSocketOf,
  UNIT_INTERFACE,
  unitObjectPath,
} from "./dbus/systemd-bus.ts";
export type { MethodCall } from "./dbus/wire.ts";
export { command, slot } from "./define/command.ts";
export type { BaseConfig } from "./define/config.ts";
export {
  DEFAULT_TIMEOUT_MS,
  hostField,
  hostnameField,
  httpUrlField,
  ipField,
  MAX_TIMEOUT_MS,
  portField,
  runIdField,
} from "./define/fields.ts";
export { type ConfigOf, createKit } from "./define/kit.ts";
export { capList, cutText, limitInput, MAX_LIST_LIMIT, oneLine, truncationFields } from "./define/limits.ts";
export { nextField, type ViewFields } from "./define/model-view.ts";
export type { ServerDef } from "./define/server-def.ts";
export type { MessageOf, StreamContext } from "./define/stream.ts";
export type { AnyTool, ResultOf, ToolContext } from "./define/tool.ts";
export { DiagError } from "./errors/errors.ts";
export {
  classifySocketError,
  DIAGNOSIS_CODES,
  type DiagnosisCode,
  hostPort,
  type SocketFailureKind,
} from "./errors/socket-errors.ts";
export { type ExecResult, type NodeChild, spawnNodeChild } from "./exec/exec.ts";
export { DIR_NOFOLLOW, fdPath } from "./fs/beneath.ts";
export { NET_TABLE_ROW, readPieces } from "./fs/read-pieces.ts";
export { runMain } from "./main.ts";
export { formatIpv6 } from "./netlink/addresses.ts";
export {
  type DiagSocket,
  dumpSockets,
  releaseFreeHeap,
  sameFilesTable,
  stateMask,
  TCP_STATE,
} from "./netlink/sock-diag.ts";
export {
  type DialAttempt,
  DialError,
  type Dialed,
  type DialPhase,
  dial,
  dialUdp,
  HOP_HEADERS,
  type HopResponse,
  type HttpProbeResult,
  httpProbe,
  httpRequest,
  isRedirectStatus,
  type OutboundPolicy,
  type PhaseTiming,
  PROBE_USER_AGENT,
  portOf,
  probeAnswer,
  proxyRefusal,
  type ResolvedTarget,
  spanMs,
  type TlsFacts,
  timingMsField,
} from "./outbound/index.ts";
export { probeEnv } from "./probe/modules.ts";
export { defineProber, type ProbeContext, type ProbeOutcome, type ProbeSeries } from "./probe/prober.ts";
export { createLimiter, type Limiter } from "./runtime/limiter.ts";
export { MASK, maskArgv, maskCommandLine, maskText, maskUrl, shownUrl } from "./runtime/mask.ts";
export { createSharedCalls } from "./runtime/shared-calls.ts";
