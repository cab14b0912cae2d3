/**
 * A real DNS server for tests: UDP and TCP on one loopback address, answering from a zone you pass in
 * (TTLs exactly as given), NXDOMAIN for names it does not know, and names that misbehave on purpose.
 */
import { createSocket, type RemoteInfo, type Socket as UdpSocket } from "node:dgram";
import { createServer, isIP, type Server, type Socket } from "node:net";
import dnsPacket, { type Answer, type DecodedPacket, type Question, type SoaData } from "dns-packet";

export type TestRecord =
  | { name: string; type: "A" | "AAAA" | "CNAME" | "NS" | "PTR"; ttl: number; data: string }
  | { name: string; type: "MX"; ttl: number; data: { preference: number; exchange: string } }
  | { name: string; type: "TXT"; ttl: number; data: string | string[] }
  | { name: string; type: "SOA"; ttl: number; data: SoaData };

/**
 * - servfail / refused: answer with that rcode
 * - timeout: never answer (UDP or TCP)
 * - truncate: over UDP answer with TC set and no records, so the client must ask again over TCP
 * - spoof_first: first send a reply with the wrong id and one with the wrong question, then the real one
 * - garbage: answer with bytes that are not a DNS message, and nothing else
 */
export type Misbehaviour =
  | "servfail"
  | "refused"
  | "timeout"
  | "truncate"
  | "spoof_first"
  | "garbage"
  /** The answer's last record cut short: its RDLENGTH promises bytes the packet does not carry. */
  | "short_rdata";

export interface DnsServerOptions {
  /** Default 127.0.0.1 (::1 works too). Any 127.x.y.z works on Linux without adding an address. */
  host?: string;
  /** Default 0 (any free port); 53 needs root. */
  port?: number;
  records: readonly TestRecord[];
  misbehave?: Readonly<Record<string, Misbehaviour>>;
}

export interface SeenQuery {
  transport: "udp" | "tcp";
  name: string;
  type: string;
  id: number;
}

export interface TestDnsServer {
  host: string;
  port: number;
  /** Every question received, in order. */
  queries: SeenQuery[];
  close(): Promise<void>;
}

/** Classic DNS over UDP without EDNS: answers longer than this are truncated. */
export const UDP_PAYLOAD_LIMIT = 512;
const MAX_CNAME_HOPS = 8;
const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;

const norm = (name: string) => name.replace(/\.$/, "").toLowerCase();

interface Resolution {
  rcode: number;
  answers: Answer[];
  authorities: Answer[];
}

/** Answer a question from the zone, following CNAMEs inside it as an authoritative server would. */
export function resolveInZone(records: readonly TestRecord[], question: Question): Resolution {
  const answers: Answer[] = [];
  let current = norm(question.name);
  const soa = records.filter(
    (r) => r.type === "SOA" && (current === norm(r.name) || current.endsWith(`.${norm(r.name)}`)),
  );
  for (let hop = 0; hop < MAX_CNAME_HOPS; hop++) {
    const here = records.filter((r) => norm(r.name) === current);
    const exact = here.filter((r) => r.type === question.type);
    if (exact.length) return { rcode: RCODE.NOERROR, answers: [...answers, ...(exact as Answer[])], authorities: [] };
    const cname = here.find((r) => r.type === "CNAME");
    if (cname && question.type !== "CNAME" && typeof cname.data === "string") {
      answers.push(cname as Answer);
      current = norm(cname.data);
      continue;
    }
    // A known name with no records of this type is NODATA; an unknown name is NXDOMAIN.
    return { rcode: here.length ? RCODE.NOERROR : RCODE.NXDOMAIN, answers, authorities: soa as Answer[] };
  }
  return { rcode: RCODE.SERVFAIL, answers: [], authorities: [] };
}

function reply(query: DecodedPacket, question: Question, r: Resolution, extraFlags = 0): Buffer {
  const rd = (query.flags ?? 0) & dnsPacket.RECURSION_DESIRED;
  return dnsPacket.encode({
    type: "response",
    id: query.id ?? 0,
    // dns-packet writes `flags` into the header as-is: the low four bits are the rcode.
    flags: dnsPacket.AUTHORITATIVE_ANSWER | dnsPacket.RECURSION_AVAILABLE | rd | extraFlags | r.rcode,
    questions: [question],
    answers: r.answers,
    authorities: r.authorities,
  });
}

/** The messages to send back, in order (none for a name that times out). */
function respond(options: DnsServerOptions, query: DecodedPacket, transport: "udp" | "tcp"): Buffer[] {
  const question = query.questions?.[0];
  if (!question) return [];
  const mode = options.misbehave?.[norm(question.name)];
  switch (mode) {
    case "timeout":
      return [];
    case "garbage":
      return [Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x00])];
    case "servfail":
      return [reply(query, question, { rcode: RCODE.SERVFAIL, answers: [], authorities: [] })];
    case "refused":
      return [reply(query, question, { rcode: RCODE.REFUSED, answers: [], authorities: [] })];
    default:
      break;
  }
  const resolution = resolveInZone(options.records, question);
  const full = reply(query, question, resolution);
  if (transport === "udp" && (mode === "truncate" || full.length > UDP_PAYLOAD_LIMIT)) {
    return [reply(query, question, { ...resolution, answers: [], authorities: [] }, dnsPacket.TRUNCATED_RESPONSE)];
  }
  if (mode === "short_rdata") return [full.subarray(0, full.length - 2)];
  if (mode === "spoof_first") {
    const fake: Resolution = {
      rcode: 0,
      answers: [{ type: "A", name: question.name, ttl: 1, data: "203.0.113.66" }],
      authorities: [],
    };
    const wrongId = { ...query, id: ((query.id ?? 0) + 1) & 0xffff };
    const wrongQuestion = { ...question, name: `spoofed.${question.name}` };
    return [reply(wrongId, question, fake), reply(query, wrongQuestion, fake), full];
  }
  return [full];
}

function decodeQuery(buf: Buffer): DecodedPacket | null {
  try {
    const packet = dnsPacket.decode(buf);
    return packet.type === "query" ? packet : null;
  } catch {
    return null;
  }
}

export async function startDnsServer(options: DnsServerOptions): Promise<TestDnsServer> {
  const host = options.host ?? "127.0.0.1";
  const queries: SeenQuery[] = [];
  const seen = (transport: "udp" | "tcp", q: DecodedPacket) => {
    const question = q.questions?.[0];
    queries.push({ transport, name: question?.name ?? "", type: question?.type ?? "", id: q.id ?? 0 });
  };

  const onUdp = (udp: UdpSocket) => (msg: Buffer, from: RemoteInfo) => {
    const query = decodeQuery(msg);
    if (!query) return;
    seen("udp", query);
    for (const out of respond(options, query, "udp")) udp.send(out, from.port, from.address);
  };

  const sockets = new Set<Socket>();
  const onTcp = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    let buffered = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length > 70_000) {
        socket.destroy();
        return;
      }
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const size = 2 + buffered.readUInt16BE(0);
        const query = decodeQuery(buffered.subarray(2, size));
        buffered = buffered.subarray(size);
        if (!query) continue;
        seen("tcp", query);
        for (const out of respond(options, query, "tcp")) {
          const length = Buffer.alloc(2);
          length.writeUInt16BE(out.length);
          socket.write(Buffer.concat([length, out]));
        }
      }
    });
  };

  /** UDP on a port (any free one unless given), then TCP on the same port. */
  const bindBoth = async (): Promise<{ udp: UdpSocket; tcp: Server; port: number }> => {
    const udp: UdpSocket = createSocket(isIP(host) === 6 ? "udp6" : "udp4");
    udp.on("message", onUdp(udp));
    await new Promise<void>((resolve, reject) => {
      udp.once("error", reject);
      udp.bind({ address: host, port: options.port ?? 0 }, () => {
        udp.off("error", reject);
        resolve();
      });
    });
    const port = udp.address().port;
    const tcp: Server = createServer(onTcp);
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once("error", reject);
        tcp.listen({ host, port }, () => {
          tcp.off("error", reject);
          resolve();
        });
      });
    } catch (err) {
      udp.close();
      throw err;
    }
    return { udp, tcp, port };
  };

  // A free UDP port may be a busy TCP one (another test's connection): another UDP port then, a few times.
  let bound: { udp: UdpSocket; tcp: Server; port: number } | undefined;
  for (let attempt = 1; !bound; attempt++) {
    try {
      bound = await bindBoth();
    } catch (err) {
      const inUse = (err as NodeJS.ErrnoException).code === "EADDRINUSE";
      if (!inUse || options.port !== undefined || attempt >= 20) throw err;
    }
  }
  const { udp, tcp, port } = bound;

  let closed: Promise<void> | undefined;
  return {
    host,
    port,
    queries,
    close() {
      closed ??= (async () => {
        for (const s of sockets) s.destroy();
        await Promise.all([
          new Promise<void>((resolve) => udp.close(() => resolve())),
          new Promise<void>((resolve) => tcp.close(() => resolve())),
        ]);
      })();
      return closed;
    },
  };
}
