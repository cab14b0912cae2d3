/**
 * The outbound targets a tool or stream declares (`targets: { url: "url", host: "host" }`) are checked before
 * any work starts: a literal IP or a denied name is refused with E_FORBIDDEN at once, so a stream never opens
 * and a probe never starts for a target the policy forbids. Names are resolved, and checked again, only when
 * the work connects.
 */
import { portOf } from "./outbound/http-probe.ts";
import type { OutboundPolicy } from "./outbound/policy.ts";

export type TargetKind = "url" | "host" | "ip";

export function checkTargets(
  targets: Readonly<Record<string, TargetKind>> | undefined,
  input: Readonly<Record<string, unknown>>,
  policy: OutboundPolicy,
): void {
  if (!targets) return;
  for (const [field, kind] of Object.entries(targets)) {
    const value = input[field];
    if (typeof value !== "string") continue;
    if (kind !== "url") {
      policy.checkTarget(value);
      continue;
    }
    const url = new URL(value);
    policy.checkTarget(url.hostname, portOf(url));
  }
}
