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

export function udpExchange(
  message: Buffer,
  matches: (r: DnsReply) => boolean,
  o: QueryOptions,
  timeoutMs: number,
): Promise<Step> {
  return new Promise<Step>((resolve, reject) => {
    const stop = new AbortController();
    let socket: UdpSocket | undefined;
    const timers: NodeJS.Timeout[] = [];
    let garbled = false;
    let done = false;
    const finish = (step: Step | Error) => {
      if (done) return;
      done = true;
      for (const t of timers) clearTimeout(t);
      o.signal?.removeEventListener("abort", onAbort);
      stop.abort();
      try {
        socket?.close();
      } catch {}
      if (step instanceof Error) reject(step);
      else resolve(step);
    };
    const onAbort = () => finish({ kind: "timeout", garbled });
    if (o.signal?.aborted) return onAbort();
    o.signal?.addEventListener("abort", onAbort, { once: true });
    const send = () => {
      if (!done)
        socket?.send(
          message,
          (err: NodeJS.ErrnoException | null) => err && finish({ kind: "error", message: socketError(err.code, o) }),
        );
    };
    timers.push(setTimeout(() => finish({ kind: "timeout", garbled }), timeoutMs));
    // The kernel's dial connects the socket to the checked address: a connected socket hears ICMP "port
    // unreachable" as ECONNREFUSED instead of waiting out the timeout.
    dialUdp(o.policy, { host: o.server, port: o.port ?? DNS_PORT, signal: stop.signal }).then(
      (dialed) => {
        if (done) {
          dialed.socket.close();
          return;
        }
        socket = dialed.socket;
        socket.on("error", (err: NodeJS.ErrnoException) =>
          finish({ kind: "error", message: socketError(err.code, o) }),
        );
        socket.on("message", (msg) => {
          const reply = decode(msg);
          if (!reply) garbled = true;
          else if (matches(reply)) finish({ kind: "reply", reply });
        });
        send();
        for (let i = 1; i < UDP_ATTEMPTS; i++) timers.push(setTimeout(send, (timeoutMs * i) / UDP_ATTEMPTS));
      },
      (err: unknown) =>
        finish(err instanceof DialError ? { kind: "error", message: socketError(err.errno, o) } : toError(err)),
    );
  });
}

export function tcpExchange(
  framed: Buffer,
  matches: (r: DnsReply) => boolean,
  o: QueryOptions,
  timeoutMs: number,
): Promise<Step> {
  return new Promise<Step>((resolve, reject) => {
    const stop = new AbortController();
    let socket: Socket | undefined;
    let buffered = Buffer.alloc(0);
    let done = false;
    const finish = (step: Step | Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      o.signal?.removeEventListener("abort", onAbort);
      stop.abort();
      socket?.destroy();
      if (step instanceof Error) reject(step);
      else resolve(step);
    };
    const onAbort = () => finish({ kind: "timeout", garbled: false });
    const timer = setTimeout(onAbort, timeoutMs);
    if (o.signal?.aborted) return onAbort();
    o.signal?.addEventListener("abort", onAbort, { once: true });
    dial(o.policy, { host: o.server, port: o.port ?? DNS_PORT, signal: stop.signal }).then(
      (dialed) => {
        if (done) {
          dialed.socket.destroy();
          return;
        }
        socket = dialed.socket;
        socket.on("error", (err: NodeJS.ErrnoException) =>
          finish({ kind: "error", message: socketError(err.code, o, "tcp", false) }),
        );
        socket.on("close", () =>
          finish({ kind: "error", message: "server closed the TCP connection without an answer" }),
        );
        socket.on("data", (chunk: Buffer) => {
          buffered = Buffer.concat([buffered, chunk]);
          if (buffered.length > MAX_TCP_BYTES) return finish({ kind: "error", message: "TCP answer too large" });
          // Several framed messages may arrive; take each complete one in turn.
          while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
            const size = 2 + buffered.readUInt16BE(0);
            let reply: DnsReply | null = null;
            try {
              reply = dnsPacket.streamDecode(buffered.subarray(0, size)) as DnsReply | null;
            } catch {}
            buffered = buffered.subarray(size);
            if (reply && matches(reply)) return finish({ kind: "reply", reply });
          }
        });
        socket.write(framed);
      },
      (err: unknown) =>
        finish(err instanceof DialError ? { kind: "error", message: socketError(err.errno, o, "tcp") } : toError(err)),
    );
  });
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
