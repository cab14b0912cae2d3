/**
 * Webcheck reaches nothing until the operator names what it may reach: with OUTBOUND_ALLOW unset, every target
 * is refused (E_FORBIDDEN naming the variable), where the kernel's default would allow loopback and private
 * ranges. A headless browser follows whatever a page links, so "everything but metadata" is too wide here.
 * One variable, the kernel's own: the same policy then decides every address, redirect hop and browser request.
 */
import { DiagError } from "@roadnerd/conventions";
import type { WebcheckConfig } from "./kit.ts";

export const ALLOW_VAR = "OUTBOUND_ALLOW";

export function requireAllowlist(config: Pick<WebcheckConfig, "OUTBOUND_ALLOW">): void {
  if (config.OUTBOUND_ALLOW.length > 0) return;
  throw new DiagError("E_FORBIDDEN", `webcheck reaches no target until ${ALLOW_VAR} names it`, {
    hint: `start the server with ${ALLOW_VAR}=<hosts or CIDRs>, e.g. ${ALLOW_VAR}=192.0.2.10,intranet.example`,
  });
}
