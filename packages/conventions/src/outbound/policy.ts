/** Outbound target policy (placeholder interface; implementation lands with the outbound module). */
import type { Dispatcher } from "undici";

export interface ResolvedTarget {
  address: string;
  family: 4 | 6;
  dnsMs: number;
}

export interface OutboundPolicy {
  /** Resolve `host` (or take an IP literal), check every address, return the one to pin. E_FORBIDDEN / E_DNS_FAIL. */
  resolveTarget(host: string, signal?: AbortSignal): Promise<ResolvedTarget>;
  /** Throw E_FORBIDDEN if this IP is denied. */
  checkAddress(ip: string): void;
  /** An undici dispatcher whose connector checks and pins every connection, redirect hops included. */
  dispatcher: Dispatcher;
}

export interface OutboundConfig {
  allow: readonly string[];
  deny: readonly string[];
}
