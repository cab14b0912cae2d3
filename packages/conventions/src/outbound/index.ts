/** The outbound target policy every tool that reaches out goes through. */
import { createPolicy, type OutboundConfig, type OutboundPolicy } from "./policy.ts";

export { DEFAULT_DENY, type OutboundConfig, type OutboundPolicy, type ResolvedTarget, unwrapIPv4 } from "./policy.ts";

export function createOutboundPolicy(config: OutboundConfig): OutboundPolicy {
  return createPolicy(config);
}
