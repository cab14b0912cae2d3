/**
 * The two ways a DNS message travels: UDP with retransmits, TCP with 2-byte length framing. Both sockets are the
 * kernel's dial, to the address the policy checked (the system resolver through `policy.trusting`).
 */
import type { Socket as UdpSocket } from "node:dgram";
import type { Socket } from "node:net";
import { classifySocketError, DialError, dial, dialUdp } from "@roadnerd/conventions";
import dnsPacket from "dns-packet";
import type { DnsReply, QueryOptions, Step } from "./query.ts";

export const DNS_PORT = 53;
/** UDP sends per query (the first plus retransmits), spread over the time allowed. */
export const UDP_ATTEMPTS = 3;
/** A DNS message over TCP is at most 65535 bytes after its 2-byte length. */
const MAX_TCP_BYTES = 65_537;

function decode(buf: Buffer): DnsReply | null {
  try {
    return dnsPacket.decode(buf) as DnsReply;
  } catch {
    return null;
  }
}

/** One exchange, however it ends (reply, error, deadline, caller gone): settled once, everything released. */
interface Exchange {
  finish(step: Step | Error): void;
  ended(): boolean;
  /** Aborted at the end: a dial still in flight stops. */
  signal: AbortSignal;
  /** Run `fn` after `ms` unless the exchange has ended by then. */
  later(ms: number, fn: () => void): void;
  /** What to release at the end: the socket, once dialled. */
  onEnd(release: () => void): void;
}

function exchange(o: QueryOptions, timeoutMs: number, timedOut: () => Step, run: (x: Exchange) => void): Promise<Step> {
  return new Promise<Step>((resolve, reject) => {
    const stop = new AbortController();
    const timers: NodeJS.Timeout[] = [];
    let release = () => {};
    let done = false;
    const finish = (step: Step | Error) => {
      if (done) return;
      done = true;
      for (const t of timers) clearTimeout(t);
      o.signal?.removeEventListener("abort", onAbort);
      stop.abort();
      release();
      if (step instanceof Error) reject(step);
      else resolve(step);
    };
    const onAbort = () => finish(timedOut());
    if (o.signal?.aborted) return onAbort();
    o.signal?.addEventListener("abort", onAbort, { once: true });
    timers.push(setTimeout(onAbort, timeoutMs));
    run({
      finish,
      ended: () => done,
      signal: stop.signal,
      later: (ms, fn) => timers.push(setTimeout(fn, ms)),
      onEnd: (r) => {
        release = r;
      },
    });
  });
}

export function udpExchange(
  message: Buffer,
  matches: (r: DnsReply) => boolean,
  o: QueryOptions,
  timeoutMs: number,
): Promise<Step> {
  let garbled = false;
  return exchange(
    o,
    timeoutMs,
    () => ({ kind: "timeout", garbled }),
    (x) => {
      let socket: UdpSocket | undefined;
      const send = () => {
        if (!x.ended())
          socket?.send(
            message,
            (err: NodeJS.ErrnoException | null) =>
              err && x.finish({ kind: "error", message: socketError(err.code, o) }),
          );
      };
      // The kernel's dial connects the socket to the checked address: a connected socket hears ICMP "port
      // unreachable" as ECONNREFUSED instead of waiting out the timeout.
      dialUdp(o.policy, { host: o.server, port: o.port ?? DNS_PORT, signal: x.signal }).then(
        (dialed) => {
          if (x.ended()) {
            dialed.socket.close();
            return;
          }
          const s = dialed.socket;
          socket = s;
          x.onEnd(() => {
            try {
              s.close();
            } catch {}
          });
          s.on("error", (err: NodeJS.ErrnoException) => x.finish({ kind: "error", message: socketError(err.code, o) }));
          s.on("message", (msg) => {
            const reply = decode(msg);
            if (!reply) garbled = true;
            else if (matches(reply)) x.finish({ kind: "reply", reply });
          });
          send();
          for (let i = 1; i < UDP_ATTEMPTS; i++) x.later((timeoutMs * i) / UDP_ATTEMPTS, send);
        },
        (err: unknown) =>
          x.finish(err instanceof DialError ? { kind: "error", message: socketError(err.errno, o) } : toError(err)),
      );
    },
  );
}

export function tcpExchange(
  framed: Buffer,
  matches: (r: DnsReply) => boolean,
  o: QueryOptions,
  timeoutMs: number,
): Promise<Step> {
  return exchange(
    o,
    timeoutMs,
    () => ({ kind: "timeout", garbled: false }),
    (x) => {
      let buffered = Buffer.alloc(0);
      dial(o.policy, { host: o.server, port: o.port ?? DNS_PORT, signal: x.signal }).then(
        (dialed) => {
          if (x.ended()) {
            dialed.socket.destroy();
            return;
          }
          const socket: Socket = dialed.socket;
          x.onEnd(() => socket.destroy());
          socket.on("error", (err: NodeJS.ErrnoException) =>
            x.finish({ kind: "error", message: socketError(err.code, o, "tcp", false) }),
          );
          socket.on("close", () =>
            x.finish({ kind: "error", message: "server closed the TCP connection without an answer" }),
          );
          socket.on("data", (chunk: Buffer) => {
            buffered = Buffer.concat([buffered, chunk]);
            if (buffered.length > MAX_TCP_BYTES) return x.finish({ kind: "error", message: "TCP answer too large" });
            // Several framed messages may arrive; take each complete one in turn.
            while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
              const size = 2 + buffered.readUInt16BE(0);
              let reply: DnsReply | null = null;
              try {
                reply = dnsPacket.streamDecode(buffered.subarray(0, size)) as DnsReply | null;
              } catch {}
              buffered = buffered.subarray(size);
              if (reply && matches(reply)) return x.finish({ kind: "reply", reply });
            }
          });
          socket.write(framed);
        },
        (err: unknown) =>
          x.finish(
            err instanceof DialError ? { kind: "error", message: socketError(err.errno, o, "tcp") } : toError(err),
          ),
      );
    },
  );
}

function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * OS errors through the kernel's one socket-error boundary, with the address in the message. UDP "connects"
 * only to set its peer, so its errors count as connect-time; TCP says whether it was still connecting.
 */
function socketError(errno: string | undefined, o: QueryOptions, proto = "udp", connecting = true): string {
  const where = `${o.server} port ${o.port ?? DNS_PORT}/${proto}`;
  const failure = classifySocketError(errno, connecting);
  if (failure.kind === "refused") return `nothing listens on ${where} (connection refused)`;
  if (failure.kind === "unreachable") return `${failure.reason} (${where}, ${failure.errno})`;
  return `${failure.errno} on ${where}`;
}
