/**
 * The one way out: every TCP or TLS connection a tool opens to a host — straight, or through an HTTP proxy's
 * CONNECT — is opened here. Resolve with the outbound policy (every address checked), check each address again
 * just before its dial, try them in the resolver's order (the next only when one refuses, has no route, or stays
 * silent through its share of `timeoutMs`, as curl does), connect to exactly the checked IP, and time each phase.
 * TLS never sends an IP literal as SNI, offers the ALPN asked for, and reports the certificate instead of
 * refusing it (`rejectUnauthorized: false`; `authorized` says what a browser would do).
 */
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { ipFamily } from "../define/fields.ts";
import { DiagError } from "../errors/errors.ts";
import { classifySocketError, type DiagnosisCode, errnoOf, hostPort } from "../errors/socket-errors.ts";
import { type DialAttempt, DialError, type DialErrorDetails, type DialPhase } from "./dial-error.ts";
import { connectOnce, type DialTls, handshake, ignore } from "./dial-sockets.ts";
import type { OutboundPolicy } from "./policy.ts";
import { type PhaseTiming, spanMs } from "./timing.ts";
import { type TlsFacts, tlsFacts } from "./tls-facts.ts";
import { openTunnel } from "./tunnel.ts";

export type { DialTls } from "./dial-sockets.ts";

export interface DialProxy {
  /** The proxy's host (name or IP literal): resolved, checked and pinned like any target. */
  host: string;
  port: number;
  /** Speak TLS with the proxy itself (an https:// proxy). */
  tls?: DialTls | undefined;
  /** Sent with CONNECT, e.g. Proxy-Authorization. */
  headers?: Readonly<Record<string, string>> | undefined;
  /** false: stop at the proxy, for an absolute-form request (plain http through a proxy). Default: CONNECT. */
  tunnel?: boolean | undefined;
}

export interface DialOptions {
  /** Name or IP literal (brackets allowed): what the certificate must name and what SNI carries (a name only). */
  host: string;
  port: number;
  /** The caller's deadline or departure: ends whatever phase the dial is in (E_TIMEOUT, `gaveUp` on the address). */
  signal: AbortSignal;
  /** TLS with the target (through the tunnel when there is a proxy). */
  tls?: DialTls | undefined;
  /**
   * Through an HTTP proxy. The proxy hop is resolved, checked and pinned; the target is checked by name or literal
   * only, since the proxy resolves it (a caller that must judge its addresses resolves it first).
   */
  proxy?: DialProxy | undefined;
  /**
   * A bound of the dial's own: each address gets an even share of what is left, and one that stays silent through
   * its share gives way to the next. Without it only `signal` bounds the dial.
   */
  timeoutMs?: number | undefined;
}

export interface Dialed<S extends Socket = Socket> {
  /** Connected (and secure, when TLS was asked): speak over it, destroy it when done. */
  socket: S;
  /** The checked IP the connection is pinned to: the target's, or the proxy's when through one. */
  address: string;
  /** dns, connect, tls (and proxy_connect, tunnel through a proxy); total is the dial's; ttfb is left 0. */
  timing: PhaseTiming;
  /** The target's handshake, when TLS was asked. */
  tls: S extends TLSSocket ? TlsFacts : TlsFacts | null;
  /** Every address tried, in order; the last one connected. */
  attempts: DialAttempt[];
}

const TIMEOUT_TEXT: Record<DialPhase, string> = {
  dns: "name lookup timeout",
  proxy_connect: "connect timeout",
  proxy_tls: "TLS handshake timeout",
  tunnel: "no answer to CONNECT in time",
  connect: "connect timeout",
  tls: "TLS handshake timeout",
};

/** The target (or proxy) on a socket: resolve, then each checked address in turn. */
interface Hop {
  socket: Socket;
  address: string;
}

export function dial(policy: OutboundPolicy, options: DialOptions & { tls: DialTls }): Promise<Dialed<TLSSocket>>;
export function dial(policy: OutboundPolicy, options: DialOptions): Promise<Dialed>;
export async function dial(policy: OutboundPolicy, options: DialOptions): Promise<Dialed> {
  const started = performance.now();
  const host = options.host.replace(/^\[|\]$/g, "");
  const { proxy, port } = options;
  const timing: PhaseTiming = { dns: 0, connect: 0, tls: 0, ttfb: 0, total: 0 };
  if (proxy) Object.assign(timing, { proxy_connect: 0, tunnel: 0 });
  const attempts: DialAttempt[] = [];
  const open: Socket[] = [];
  let phase: DialPhase = "dns";
  /** The host being resolved (the target, or the proxy), and "addr:port" once talking to one. */
  let subject = host;
  let where: string | undefined;

  // The dial's own bound (timeoutMs) and the caller's signal, as one signal for every phase.
  const life = new AbortController();
  const onOuter = () => life.abort();
  if (options.signal.aborted) onOuter();
  else options.signal.addEventListener("abort", onOuter, { once: true });
  const deadline = options.timeoutMs === undefined ? undefined : started + options.timeoutMs;
  const timer = options.timeoutMs === undefined ? undefined : setTimeout(onOuter, options.timeoutMs);
  const signal = life.signal;

  const failed = (code: DiagnosisCode, message: string, extra: Partial<DialErrorDetails> = {}) => {
    timing.total = spanMs(started);
    return new DialError(code, message, { phase, where, timing: { ...timing }, attempts: [...attempts], ...extra });
  };
  const timedOut = () => failed("E_TIMEOUT", `${TIMEOUT_TEXT[phase]} (${where ? `address ${where}` : subject})`);

  /** Resolve `name` with the policy and connect to its checked addresses in turn. */
  async function reach(name: string, to: number, connectPhase: "connect" | "proxy_connect"): Promise<Hop> {
    phase = "dns";
    subject = name;
    if (signal.aborted) throw timedOut();
    let addresses: readonly string[];
    try {
      const resolved = await policy.resolveTarget(name, signal, to);
      addresses = resolved.addresses;
      timing.dns = resolved.dnsMs;
    } catch (err) {
      if (err instanceof DiagError && (err.code === "E_DNS_FAIL" || err.code === "E_TIMEOUT")) {
        timing.dns = spanMs(started);
        throw failed(err.code, err.message, { cause: err });
      }
      throw err;
    }
    phase = connectPhase;
    const from = performance.now();
    for (const [i, address] of addresses.entries()) {
      // Checked again just before the dial: what we connect to is exactly what the policy saw.
      policy.checkAddress(address, ipFamily(name) ? undefined : name, to);
      where = hostPort(address, to);
      const limitMs =
        deadline === undefined
          ? undefined
          : Math.max(1, Math.floor((deadline - performance.now()) / (addresses.length - i)));
      const attempt = await connectOnce(address, to, signal, limitMs);
      attempts.push(attempt.record);
      if (attempt.socket) {
        timing[connectPhase] = spanMs(from);
        return { socket: attempt.socket, address };
      }
      const failure = attempt.record.failure;
      const retry = attempt.record.gaveUp || failure?.kind === "refused" || failure?.kind === "unreachable";
      if (retry && !signal.aborted && i + 1 < addresses.length) continue;
      if (attempt.record.gaveUp) throw timedOut();
      const errno = failure?.errno ?? "EUNKNOWN";
      throw failed(
        failure?.code ?? "E_CONN_REFUSED",
        `${failure?.reason ?? "connect failed"} (${errno}, address ${where})`,
        {
          errno,
          cause: attempt.error,
        },
      );
    }
    throw failed("E_DNS_FAIL", `${name} has no addresses`);
  }

  /** TLS over `socket`, checked against `name`; E_TLS (or E_TIMEOUT) in the current phase. */
  async function secure(socket: Socket, name: string, tls: DialTls): Promise<TLSSocket> {
    try {
      return await handshake(socket, name, tls, signal);
    } catch (err) {
      if (signal.aborted) throw timedOut();
      const errno = errnoOf(err);
      const failure = classifySocketError(errno, false);
      const code = failure.kind === "timeout" ? "E_TIMEOUT" : "E_TLS";
      throw failed(code, `TLS handshake failed: ${tlsReason(err).slice(0, 120)} (${errno ?? "?"}, address ${where})`, {
        errno,
        cause: err,
      });
    }
  }

  /** CONNECT through the proxy on `socket`; a refusal is E_CONN_REFUSED with the proxy's status. */
  async function tunnel(socket: Socket, authority: string, headers: Readonly<Record<string, string>>): Promise<Socket> {
    if (signal.aborted) throw timedOut();
    const { answer, cancel } = openTunnel(socket, authority, headers);
    const onAbort = () => cancel();
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      const a = await answer;
      if (!a.ok) {
        const { message, status, authenticate } = a.refusal;
        throw failed("E_CONN_REFUSED", message, { proxyStatus: status, proxyAuthenticate: authenticate });
      }
      return a.socket;
    } catch (err) {
      if (err instanceof DialError) throw err;
      if (signal.aborted) throw timedOut();
      const errno = errnoOf(err);
      const f = classifySocketError(errno, false);
      const what = errno?.startsWith("HPE_") ? "not an HTTP response" : f.reason;
      throw failed(f.code, `${what} (${errno ?? messageOf(err)}, address ${where})`, { errno, cause: err });
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  try {
    let hop: Hop;
    let tls: TlsFacts | null = null;
    if (proxy) {
      if (options.tls && proxy.tunnel === false) {
        throw new DiagError("E_INVALID_INPUT", "TLS with the target needs a tunnel through the proxy");
      }
      // The proxy resolves the target: what can be decided without a lookup is decided here, before anything is sent.
      policy.checkTarget(host, port);
      hop = await reach(proxy.host.replace(/^\[|\]$/g, ""), proxy.port, "proxy_connect");
      open.push(hop.socket);
      if (proxy.tls) {
        phase = "proxy_tls";
        const from = performance.now();
        hop.socket = await secure(hop.socket, proxy.host.replace(/^\[|\]$/g, ""), proxy.tls);
        open.push(hop.socket);
        timing.proxy_connect = (timing.proxy_connect ?? 0) + spanMs(from);
      }
      if (proxy.tunnel !== false) {
        phase = "tunnel";
        const from = performance.now();
        hop.socket = await tunnel(hop.socket, hostPort(host, port), proxy.headers ?? {});
        timing.tunnel = spanMs(from);
        where = hostPort(host, port);
      }
    } else {
      hop = await reach(host, port, "connect");
      open.push(hop.socket);
    }
    if (options.tls) {
      phase = "tls";
      const from = performance.now();
      const secured = await secure(hop.socket, host, options.tls);
      open.push(secured);
      timing.tls = spanMs(from);
      tls = tlsFacts(secured, host);
      hop.socket = secured;
    }
    timing.total = spanMs(started);
    for (const s of open) s.on("error", ignore);
    return { socket: hop.socket, address: hop.address, timing, tls, attempts };
  } catch (err) {
    for (const s of open) s.destroy();
    throw err;
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener("abort", onOuter);
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** OpenSSL's own message carries its source path; its `reason` (or the message's last part) says it in a line. */
function tlsReason(err: unknown): string {
  const reason = err instanceof Error && "reason" in err ? err.reason : undefined;
  return typeof reason === "string" ? reason : (messageOf(err).split(":").at(-1)?.trim() ?? "");
}
