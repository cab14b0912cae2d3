/**
 * How a dial fails: a diagnosis about the target (a name that does not resolve, a refused port, no route, a
 * failed handshake, a proxy that said no, a deadline), with the phase it failed in, the address it was talking
 * to, the timings so far and every address tried. A policy refusal is not a DialError: it stays the policy's
 * own E_FORBIDDEN / E_INVALID_INPUT.
 */
import { DiagError } from "../errors/errors.ts";
import type { DiagnosisCode, SocketFailure } from "../errors/socket-errors.ts";
import type { PhaseTiming } from "./timing.ts";

/** Where a dial was: resolving, reaching the proxy, its TLS, the CONNECT, reaching the target, the target's TLS. */
export type DialPhase = "dns" | "proxy_connect" | "proxy_tls" | "tunnel" | "connect" | "tls";

/** One address tried, in the resolver's order. */
export interface DialAttempt {
  address: string;
  /** ms from this attempt's start to its answer (handshake, refusal, ICMP) or to giving up on it. */
  ms: number;
  /** The share of the dial's time this address had (only when the dial was given `timeoutMs`). */
  limitMs?: number;
  /** Why it failed; absent on the one that connected. */
  failure?: SocketFailure;
  /** Nothing answered and we stopped waiting (its share ran out, or the caller's signal fired). */
  gaveUp?: boolean;
}

export interface DialErrorDetails {
  phase: DialPhase;
  /** "addr:port" being talked to when it failed; undefined while resolving. */
  where?: string | undefined;
  /** The OS / TLS / HTTP-parser code, when there was one. */
  errno?: string | undefined;
  timing: PhaseTiming;
  attempts: readonly DialAttempt[];
  /** The proxy's own answer to CONNECT when it refused (407 credentials, 403…). */
  proxyStatus?: number | undefined;
  /** Proxy-Authenticate: the scheme a proxy wants (no credential in it). */
  proxyAuthenticate?: string | undefined;
  cause?: unknown;
}

export class DialError extends DiagError {
  declare readonly code: DiagnosisCode;
  readonly phase: DialPhase;
  readonly where: string | undefined;
  readonly errno: string | undefined;
  readonly timing: PhaseTiming;
  readonly attempts: readonly DialAttempt[];
  readonly proxyStatus: number | undefined;
  readonly proxyAuthenticate: string | undefined;

  constructor(code: DiagnosisCode, message: string, details: DialErrorDetails) {
    super(code, message, { cause: details.cause });
    this.name = "DialError";
    this.phase = details.phase;
    this.where = details.where;
    this.errno = details.errno;
    this.timing = details.timing;
    this.attempts = details.attempts;
    this.proxyStatus = details.proxyStatus;
    this.proxyAuthenticate = details.proxyAuthenticate;
  }
}
