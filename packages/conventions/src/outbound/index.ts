/** The outbound target policy and the one dial every tool that reaches out goes through. */
import { refreshNamedPorts } from "./own-ports.ts";
import { createPolicy, type OutboundConfig, type OutboundPolicy } from "./policy.ts";

export { DEFAULT_DENY, type OutboundConfig, type OutboundPolicy, type ResolvedTarget, unwrapIPv4 } from "./policy.ts";

/** A server's policy, made at its start: ROADNERD_<NAME>_PORT variables set until now count at once. */
export function createOutboundPolicy(config: OutboundConfig): OutboundPolicy {
  // Here, not in createPolicy: a tool's `trusting` policy (dns_resolve, per call) must not list process.env.
  refreshNamedPorts();
  return createPolicy(config);
}
export { type Dialed, type DialOptions, type DialProxy, type DialTls, dial } from "./dial.ts";
export { type DialAttempt, DialError, type DialPhase } from "./dial-error.ts";
export { type DialedUdp, type DialUdpOptions, dialUdp } from "./dial-udp.ts";
export { HOP_HEADER, HOP_HEADERS, HOP_REFUSAL, HOP_VALUE, isToolHop } from "./hop.ts";
export {
  type ChainStop,
  DEFAULT_BODY_PREFIX_BYTES,
  DEFAULT_MAX_REDIRECTS,
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
  PROBE_USER_AGENT,
  type ProbeMethod,
} from "./http-probe.ts";
export { portOf } from "./port-of.ts";
export { type ProbeAnswer, probeAnswer } from "./probe-answer.ts";
export { type ProbeFailure, type ProbePhase, toProbeFailure } from "./probe-failure.ts";
export { type PhaseTiming, spanMs, timingMsField } from "./timing.ts";
export type { TlsFacts } from "./tls-facts.ts";
export { type ProxyRefusal, proxyRefusal } from "./tunnel.ts";
