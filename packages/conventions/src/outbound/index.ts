/** Outbound policy entry (stub until the outbound module lands). */
import { Agent } from "undici";
import { DiagError } from "../errors.ts";
import type { OutboundConfig, OutboundPolicy } from "./policy.ts";

export type { OutboundConfig, OutboundPolicy, ResolvedTarget } from "./policy.ts";

export function createOutboundPolicy(_config: OutboundConfig): OutboundPolicy {
  return {
    async resolveTarget() {
      throw new DiagError("E_UNSUPPORTED", "outbound policy not implemented");
    },
    checkAddress() {
      throw new DiagError("E_UNSUPPORTED", "outbound policy not implemented");
    },
    dispatcher: new Agent(),
  };
}
