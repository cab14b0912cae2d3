/**
 * The dial's UDP side, for a datagram exchange such as a DNS question: resolve with the policy, check the address
 * again, and connect a datagram socket to exactly it (a connected socket also hears ICMP "port unreachable" as
 * ECONNREFUSED instead of waiting out its timeout). The first checked address is used: a datagram has no
 * handshake to fall back on.
 */
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { ipFamily } from "../define/fields.ts";
import { DiagError } from "../errors/errors.ts";
import { classifySocketError, errnoOf, hostPort } from "../errors/socket-errors.ts";
import { DialError, type DialErrorDetails } from "./dial-error.ts";
import type { OutboundPolicy } from "./policy.ts";
import { type PhaseTiming, spanMs } from "./timing.ts";

export interface DialUdpOptions {
  /** Name or IP literal (brackets allowed). */
  host: string;
  port: number;
  signal: AbortSignal;
}

export interface DialedUdp {
  /** Connected to `address`: send without an address, close it when done. */
  socket: UdpSocket;
  /** The checked IP the socket is connected to. */
  address: string;
  timing: PhaseTiming;
}

export async function dialUdp(policy: OutboundPolicy, options: DialUdpOptions): Promise<DialedUdp> {
  const started = performance.now();
  const host = options.host.replace(/^\[|\]$/g, "");
  const { port, signal } = options;
  const timing: PhaseTiming = { dns: 0, connect: 0, tls: 0, ttfb: 0, total: 0 };
  const fail = (code: DialError["code"], message: string, details: Partial<DialErrorDetails> = {}) =>
    new DialError(code, message, {
      phase: "dns",
      timing: { ...timing, total: spanMs(started) },
      attempts: [],
      ...details,
    });
  if (signal.aborted) throw fail("E_TIMEOUT", `name lookup timeout (${host})`);
  let address: string;
  try {
    const resolved = await policy.resolveTarget(host, signal, port);
    address = resolved.address;
    timing.dns = resolved.dnsMs;
  } catch (err) {
    if (err instanceof DiagError && (err.code === "E_DNS_FAIL" || err.code === "E_TIMEOUT")) {
      throw fail(err.code, err.message, { cause: err });
    }
    throw err;
  }
  policy.checkAddress(address, ipFamily(host) ? undefined : host, port);
  const where = hostPort(address, port);
  const from = performance.now();
  const socket = createSocket(ipFamily(address) === 6 ? "udp6" : "udp4");
  try {
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(Object.assign(new Error("aborted"), { code: "ECONNABORTED", aborted: true }));
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      // A failed connect (no route) calls back with the error instead of emitting it.
      socket.connect(port, address, (err?: Error) => {
        signal.removeEventListener("abort", onAbort);
        if (err) reject(err);
        else resolve();
      });
    });
  } catch (err) {
    try {
      socket.close();
    } catch {}
    if (signal.aborted) throw fail("E_TIMEOUT", `connect timeout (address ${where})`, { phase: "connect", where });
    const failure = classifySocketError(errnoOf(err), true);
    throw fail(failure.code, `${failure.reason} (${failure.errno}, address ${where})`, {
      phase: "connect",
      where,
      errno: failure.errno,
      cause: err,
      attempts: [{ address, ms: spanMs(from), failure }],
    });
  }
  timing.connect = spanMs(from);
  timing.total = spanMs(started);
  return { socket, address, timing };
}
