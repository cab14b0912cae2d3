/**
 * The one boundary where socket, TLS, undici and resolver errors become a diagnosis: a refused port, a
 * name that does not resolve or a deadline is a result a tool reports (`error` + `detail`), not a
 * failed call. Policy refusals (E_FORBIDDEN) and bugs are rethrown untouched.
 */

import { oneLine } from "../define/limits.ts";
import { DiagError } from "../errors/errors.ts";
import { classifySocketError, type DiagnosisCode, errnoOf } from "../errors/socket-errors.ts";
import { DialError, type DialPhase } from "./dial-error.ts";

export type ProbePhase = "dns" | "connect" | "tls" | "request" | "body";

export interface ProbeFailure {
  code: DiagnosisCode;
  phase: ProbePhase;
  /** One line with the context: what failed, the address, the timeout. */
  detail: string;
}

export interface FailureContext {
  phase: ProbePhase;
  host: string;
  /** "addr:port" once known. */
  where: string | undefined;
  timeoutMs: number;
  /** Our deadline (or the caller) aborted the work. */
  timedOut: boolean;
}

const TIMEOUT_TEXT: Record<ProbePhase, string> = {
  dns: "name lookup timeout",
  connect: "connect timeout",
  tls: "TLS handshake timeout",
  request: "no response headers before the deadline",
  body: "body not complete before the deadline",
};

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The probe's view of where a dial stopped: a proxy's hops count as connecting. */
const PROBE_PHASE: Record<DialPhase, ProbePhase> = {
  dns: "dns",
  proxy_connect: "connect",
  proxy_tls: "tls",
  tunnel: "connect",
  connect: "connect",
  tls: "tls",
};

/** Turn anything a hop threw into a diagnosis, or rethrow it when it is not one. */
export function toProbeFailure(err: unknown, ctx: FailureContext): ProbeFailure {
  // The dial knows its phase and address; what it met (a socket error, a lookup failure) is classified below.
  if (err instanceof DialError) {
    const at = { ...ctx, phase: PROBE_PHASE[err.phase], where: err.where ?? ctx.where };
    if (err.cause !== undefined || at.timedOut) return toProbeFailure(err.cause ?? new Error(err.message), at);
    return { code: err.code, phase: at.phase, detail: oneLine(err.message, 200) };
  }
  const at = ctx.where ? `address ${ctx.where}` : `host ${ctx.host}`;
  const fail = (code: DiagnosisCode, phase: ProbePhase, text: string): ProbeFailure => ({
    code,
    phase,
    detail: oneLine(text, 200),
  });
  // Policy refusals and invalid targets are not diagnoses, even when the deadline fired meanwhile.
  if (err instanceof DiagError && err.code !== "E_DNS_FAIL" && err.code !== "E_TIMEOUT") throw err;
  if (ctx.timedOut)
    return fail("E_TIMEOUT", ctx.phase, `${TIMEOUT_TEXT[ctx.phase]} (${at}, timeout ${ctx.timeoutMs} ms)`);
  if (err instanceof DiagError) {
    return err.code === "E_DNS_FAIL"
      ? fail("E_DNS_FAIL", "dns", err.message)
      : fail("E_TIMEOUT", ctx.phase, `${err.message} (${at})`);
  }
  // undici's parser error may come without a code: the name is enough.
  if ((err as Error | null)?.name === "HTTPParserError") {
    return fail("E_CONN_REFUSED", ctx.phase, `not an HTTP response (${at})`);
  }
  const code = errnoOf(err);
  if (code === undefined) throw err;
  const phase = ctx.phase;
  const connecting = phase === "connect" || phase === "dns";
  const failure = classifySocketError(code, connecting);
  switch (failure.kind) {
    case "refused":
      return fail("E_CONN_REFUSED", "connect", `connection refused (${at})`);
    case "dns":
      return fail("E_DNS_FAIL", "dns", `${ctx.host} did not resolve (${code})`);
    case "timeout":
      return fail("E_TIMEOUT", phase, `${TIMEOUT_TEXT[phase]} (${code}, ${at})`);
    case "unreachable":
      return fail("E_UNREACHABLE", "connect", `${failure.reason} (${code}, ${at})`);
    default:
      break;
  }
  if (phase === "tls" || failure.kind === "tls") {
    return fail("E_TLS", "tls", `TLS handshake failed (${at}): ${messageOf(err)}`);
  }
  if (code.startsWith("HPE_")) return fail("E_CONN_REFUSED", phase, `not an HTTP response (${code}, ${at})`);
  if (failure.kind === "closed")
    return fail("E_CONN_REFUSED", phase, `connection closed before a complete response (${code}, ${at})`);
  return fail("E_CONN_REFUSED", phase, `connection failed (${code}, ${at}): ${messageOf(err)}`);
}
