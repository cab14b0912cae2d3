/**
 * Why the outbound policy refused a target, as a short label for metrics: read off the policy's own E_FORBIDDEN
 * messages (policy.ts), so a new refusal that says something else shows as `other` rather than as nothing.
 */
import type { DiagError } from "../errors/errors.ts";

export const REFUSAL_REASONS = [
  "default_deny",
  "metadata",
  "self",
  "roadnerd_port",
  "denied",
  "not_allowed",
  "allowlist_only",
  "other",
] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

const RULES: ReadonlyArray<readonly [RegExp, RefusalReason]> = [
  [/link-local or unroutable/, "default_deny"],
  [/cloud metadata/, "metadata"],
  [/this server itself/, "self"],
  [/a RoadNerd server's port/, "roadnerd_port"],
  [/OUTBOUND_DENY/, "denied"],
  [/not in OUTBOUND_ALLOW/, "not_allowed"],
  [/reaches no target until OUTBOUND_ALLOW/, "allowlist_only"],
];

export function refusalReason(err: Pick<DiagError, "message">): RefusalReason {
  for (const [pattern, reason] of RULES) if (pattern.test(err.message)) return reason;
  return "other";
}
