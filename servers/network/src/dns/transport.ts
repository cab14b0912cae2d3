/** The two ways a DNS message travels: UDP with retransmits, TCP with 2-byte length framing. */
import { createSocket } from "node:dgram";
import { connect, isIP } from "node:net";
import { classifySocketError } from "@roadnerd/conventions";
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
  return new Promise<Step>((resolve) => {
    const socket = createSocket(isIP(o.server) === 6 ? "udp6" : "udp4");
    const timers: NodeJS.Timeout[] = [];
    let garbled = false;
    let done = false;
    const finish = (step: Step) => {
      if (done) return;
      done = true;
      for (const t of timers) clearTimeout(t);
      o.signal?.removeEventListener("abort", onAbort);
      try {
        socket.close();
      } catch {}
      resolve(step);
    };
    const onAbort = () => finish({ kind: "timeout", garbled });
    if (o.signal?.aborted) return onAbort();
    o.signal?.addEventListener("abort", onAbort, { once: true });
    // A connected socket hears ICMP "port unreachable" as ECONNREFUSED instead of waiting out the timeout.
    socket.on("error", (err: NodeJS.ErrnoException) => finish({ kind: "error", message: socketError(err, o) }));
    socket.on("message", (msg) => {
      const reply = decode(msg);
      if (!reply) garbled = true;
      else if (matches(reply)) finish({ kind: "reply", reply });
    });
    const send = () => {
      if (!done) socket.send(message, (err) => err && finish({ kind: "error", message: socketError(err, o) }));
    };
    // A failed connect (no route: the laptop with no network) calls back with the error instead of emitting it;
    // sending on that unconnected socket would throw out of a timer and end the process.
    socket.connect(o.port ?? DNS_PORT, o.server, (err?: Error) => {
      if (err) return finish({ kind: "error", message: socketError(err as NodeJS.ErrnoException, o) });
      if (done) return;
      send();
      for (let i = 1; i < UDP_ATTEMPTS; i++) timers.push(setTimeout(send, (timeoutMs * i) / UDP_ATTEMPTS));
    });
    timers.push(setTimeout(() => finish({ kind: "timeout", garbled }), timeoutMs));
  });
}

export function tcpExchange(
  framed: Buffer,
  matches: (r: DnsReply) => boolean,
  o: QueryOptions,
  timeoutMs: number,
): Promise<Step> {
  return new Promise<Step>((resolve) => {
    const socket = connect({ host: o.server, port: o.port ?? DNS_PORT });
    let buffered = Buffer.alloc(0);
    let done = false;
    const finish = (step: Step) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      o.signal?.removeEventListener("abort", onAbort);
      socket.destroy();
      resolve(step);
    };
    const onAbort = () => finish({ kind: "timeout", garbled: false });
    const timer = setTimeout(onAbort, timeoutMs);
    if (o.signal?.aborted) return onAbort();
    o.signal?.addEventListener("abort", onAbort, { once: true });
    socket.on("connect", () => socket.write(framed));
    socket.on("error", (err: NodeJS.ErrnoException) =>
      finish({ kind: "error", message: socketError(err, o, "tcp", socket.connecting) }),
    );
    socket.on("close", () => finish({ kind: "error", message: "server closed the TCP connection without an answer" }));
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
  });
}

/**
 * OS errors through the kernel's one socket-error boundary, with the address in the message. UDP "connects"
 * only to set its peer, so its errors count as connect-time; TCP says whether it was still connecting.
 */
function socketError(err: NodeJS.ErrnoException, o: QueryOptions, proto = "udp", connecting = true): string {
  const where = `${o.server} port ${o.port ?? DNS_PORT}/${proto}`;
  const failure = classifySocketError(err.code, connecting);
  if (failure.kind === "refused") return `nothing listens on ${where} (connection refused)`;
  if (failure.kind === "unreachable") return `${failure.reason} (${where}, ${failure.errno})`;
  return `${failure.errno} on ${where}`;
}
