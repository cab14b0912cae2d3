/**
 * The outbound targets a tool or stream declares (`targets: { url: "url", host: "host" }`) are checked before
 * any work starts: a literal IP or a denied name is refused with E_FORBIDDEN at once, so a stream never opens
 * and a probe never starts for a target the policy forbids. Names are resolved, and checked again, only when
 * the work connects.
 */
import { toDiagError } from "../errors/errors.ts";
import type { OutboundPolicy } from "../outbound/policy.ts";
import { portOf } from "../outbound/port-of.ts";
import type { Logger } from "./logger.ts";
import { maskText } from "./mask.ts";

export type TargetKind = "url" | "host" | "ip";

/** Check a call's declared targets; a refusal is logged with its target (an operator sees who asked for what). */
export function checkTargets(
  spec: { name: string; targets?: Readonly<Record<string, TargetKind>> | undefined },
  input: Readonly<Record<string, unknown>>,
  runtime: { outbound: OutboundPolicy; log: Logger },
): void {
  try {
    checkEach(spec.targets, input, runtime.outbound);
  } catch (err) {
    const diag = toDiagError(err);
    runtime.log.info(
      { tool: spec.name, run_id: input.run_id, code: diag.code, reason: maskText(diag.message) },
      "target refused",
    );
    throw diag;
  }
}

function checkEach(
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
