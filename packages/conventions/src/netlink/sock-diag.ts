/**
 * The kernel's socket diagnostics (netlink NETLINK_SOCK_DIAG, sock_diag(7)), asked through native/sock-diag.c:
 * the listeners of this network namespace without the walk of the whole connection hash that every read of
 * /proc/net/tcp makes (0.04 ms against ~5 ms, ADR 0064), and one connection's owner by its addresses and ports
 * (an exact lookup, 0.01 ms). The module is optional: where it was not built (no C compiler), cannot load
 * (another platform) or the kernel refuses, callers read /proc/net as before; `sockDiag()` is undefined then.
 * Only queries are ever sent: the C side refuses every message type but SOCK_DIAG_BY_FAMILY.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { endianness } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { formatIpv4, formatIpv6, ipBytes } from "./addresses.ts";

/** The addon's file name: beside a built bundle (pnpm build copies it there) or in native/build/ (tests). */
export const SOCK_DIAG_ADDON = "sock-diag.node";

/** TCP states as the kernel numbers them (include/net/tcp_states.h). */
export const TCP_STATE = {
  established: 1,
  syn_sent: 2,
  syn_recv: 3,
  fin_wait1: 4,
  fin_wait2: 5,
  time_wait: 6,
  close: 7,
  close_wait: 8,
  last_ack: 9,
  listen: 10,
  closing: 11,
  new_syn_recv: 12,
  /**
   * Bound, neither listening nor connected (TCP_BOUND_INACTIVE): Linux ≥ 6.8 dumps these TCP sockets when this
   * state is asked for (they come back in state 7, close); older kernels ignore the bit and dump none.
   */
  bound_inactive: 13,
} as const;

/** The state mask of a query: the listening TCP sockets; for UDP, bound sockets are in state 7 (close). */
export const stateMask = (...states: number[]) => states.reduce((m, s) => m | (1 << s), 0) >>> 0;

export type Family = 4 | 6;
export type Protocol = "tcp" | "udp";

export interface DiagSocket {
  family: Family;
  protocol: Protocol;
  state: number;
  localAddress: string;
  localPort: number;
  remoteAddress: string;
  remotePort: number;
  uid: number;
  /** What /proc/<pid>/fd/<n> links to as socket:[inode]; 0 for a socket no file holds (closed, TIME_WAIT). */
  inode: number;
}

interface Binding {
  /** The answers' bytes; `firstDatagram`: the size of the first datagram that carried any (0: none did). */
  request(question: Uint8Array): Buffer & { firstDatagram?: number };
  /** Whether two tasks share one files table (kcmp KCMP_FILES); null when the kernel cannot say. */
  sameFiles?(a: number, b: number): boolean | null;
  /** glibc's malloc_trim(0): whether any free heap page went back to the system (false elsewhere). */
  mallocTrim?(): boolean;
}

const AF: Record<Family, number> = { 4: 2, 6: 10 };
const IPPROTO: Record<Protocol, number> = { tcp: 6, udp: 17 };
const SOCK_DIAG_BY_FAMILY = 20;
const NLM_F_REQUEST = 0x1;
const NLM_F_DUMP = 0x300;
const NLMSG_HDRLEN = 16;
/** struct inet_diag_req_v2: family, protocol, ext, pad, states, then the 48-byte inet_diag_sockid. */
const REQ_BYTES = 56;
/** struct inet_diag_msg: family, state, timer, retrans, sockid (48), expires, rqueue, wqueue, uid, inode. */
const MSG_BYTES = 72;
const INET_DIAG_NOCOOKIE = 0xffffffff;

/**
 * Where the addon may be: beside the code running this (a server's CommonJS bundle: its __dirname; the
 * orchestrator's ES module bundle: its URL; pnpm build copies the addon into both dist/), or, for this very
 * source file run by tests, in native/build/ beside src/. Never a path relative to a bundle's parent: a dist/
 * copied under /tmp would look in /tmp/native (stop 31's review). A server bundle defines import.meta.url away.
 */
function candidates(): string[] {
  // import.meta first: vitest gives a source module a __dirname too.
  const here = typeof import.meta.url === "string" ? import.meta.url : undefined;
  if (here?.startsWith("file:")) {
    const file = fileURLToPath(here);
    const fromSource = file.endsWith(join("src", "netlink", "sock-diag.ts"));
    return [join(dirname(file), fromSource ? "../../native/build" : ".", SOCK_DIAG_ADDON)];
  }
  return typeof __dirname === "string" ? [join(__dirname, SOCK_DIAG_ADDON)] : [];
}

let loaded: { binding: Binding | undefined; why: string } | undefined;

function load(): { binding: Binding | undefined; why: string } {
  if (process.platform !== "linux") return { binding: undefined, why: "not Linux" };
  const found = candidates().find((file) => existsSync(file));
  if (!found) return { binding: undefined, why: `${SOCK_DIAG_ADDON} not built (pnpm build, with a C compiler)` };
  try {
    const binding = createRequire(found)(found) as Binding;
    if (typeof binding.request !== "function") return { binding: undefined, why: `${found}: no request()` };
    // One harmless question: a kernel without inet_diag (a module not loaded, a seccomp filter) says so now.
    binding.request(question(4, "tcp", stateMask(TCP_STATE.listen)));
    return { binding, why: `loaded from ${found}` };
  } catch (err) {
    return { binding: undefined, why: `${found}: ${(err as Error).message}` };
  }
}

/** Tests of the /proc path turn the addon off (and on again: undefined reloads it). */
let off = false;
export function sockDiagOff(value: boolean): void {
  off = value;
}

/**
 * Whether two tasks (a process and one of its threads) share one files table, by kcmp(2); undefined when it
 * cannot be told (no addon, a task gone, no access): then the caller reads as if they did not.
 */
export function sameFilesTable(a: number, b: number): boolean | undefined {
  const answer = sockDiag()?.sameFiles?.(a, b);
  return typeof answer === "boolean" ? answer : undefined;
}

/**
 * Gives the free pages of every malloc arena back to the system (glibc's malloc_trim, through the addon): what a
 * quiet spell's full GC freed in the arenas of V8's worker threads stays with the process otherwise (ADR 0069).
 * Whether anything went back; undefined without the addon.
 */
export function releaseFreeHeap(): boolean | undefined {
  return sockDiag()?.mallocTrim?.();
}

/** The addon, loaded on first use; undefined where it cannot be (then `sockDiagStatus()` says why). */
export function sockDiag(): Binding | undefined {
  if (off) return undefined;
  loaded ??= load();
  return loaded.binding;
}

/** Whether the addon answers, and why not. */
export function sockDiagStatus(): { available: boolean; why: string } {
  loaded ??= load();
  return { available: loaded.binding !== undefined, why: loaded.why };
}

interface Endpoint {
  address: string;
  port: number;
}

/** Netlink speaks the machine's own byte order (the addresses and ports of a socket id are network order). */
const LE = endianness() === "LE";
const u16 = (b: Buffer, v: number, at: number) => (LE ? b.writeUInt16LE(v, at) : b.writeUInt16BE(v, at));
const u32 = (b: Buffer, v: number, at: number) => (LE ? b.writeUInt32LE(v, at) : b.writeUInt32BE(v, at));
const r16 = (b: Buffer, at: number) => (LE ? b.readUInt16LE(at) : b.readUInt16BE(at));
const r32 = (b: Buffer, at: number) => (LE ? b.readUInt32LE(at) : b.readUInt32BE(at));

/** INET_DIAG_REQ_BYTECODE: a filter the kernel runs on each socket before it answers. */
const INET_DIAG_REQ_BYTECODE = 1;
/** inet_diag_bc_op's code for "local port equals" (the next op's `no` holds the port, in host order). */
const INET_DIAG_BC_S_EQ = 11;
const NLA_HDRLEN = 4;
const FILTER_BYTES = 8;

/**
 * One SOCK_DIAG_BY_FAMILY question: a dump of `states` (with `port`, only the sockets of that local port: the
 * kernel filters), or (with `exact`) the one socket of these ends.
 */
function question(
  family: Family,
  protocol: Protocol,
  states: number,
  options: { exact?: { local: Endpoint; remote: Endpoint }; port?: number } = {},
): Buffer {
  const { exact, port } = options;
  const filtered = port !== undefined && !exact;
  const b = Buffer.alloc(NLMSG_HDRLEN + REQ_BYTES + (filtered ? NLA_HDRLEN + FILTER_BYTES : 0));
  u32(b, b.length, 0);
  u16(b, SOCK_DIAG_BY_FAMILY, 4);
  u16(b, exact ? NLM_F_REQUEST : NLM_F_REQUEST | NLM_F_DUMP, 6);
  const r = NLMSG_HDRLEN;
  b[r] = AF[family];
  b[r + 1] = IPPROTO[protocol];
  u32(b, states >>> 0, r + 4);
  if (exact) {
    const src = ipBytes(exact.local.address);
    const dst = ipBytes(exact.remote.address);
    const size = family === 4 ? 4 : 16;
    if (src?.length !== size || dst?.length !== size) throw new Error(`not an IPv${family} address pair`);
    b.writeUInt16BE(exact.local.port, r + 8);
    b.writeUInt16BE(exact.remote.port, r + 10);
    Buffer.from(src).copy(b, r + 12);
    Buffer.from(dst).copy(b, r + 28);
  }
  // idiag_if 0 (any), idiag_cookie: none.
  u32(b, INET_DIAG_NOCOOKIE, r + 48);
  u32(b, INET_DIAG_NOCOOKIE, r + 52);
  if (filtered) {
    // As `ss sport = :PORT` asks: { S_EQ, yes: next op, no: past the end (reject) }, { -, -, port }.
    const a = r + REQ_BYTES;
    u16(b, NLA_HDRLEN + FILTER_BYTES, a);
    u16(b, INET_DIAG_REQ_BYTECODE, a + 2);
    b[a + 4] = INET_DIAG_BC_S_EQ;
    b[a + 5] = FILTER_BYTES;
    u16(b, FILTER_BYTES + 4, a + 6);
    u16(b, port, a + 10);
  }
  return b;
}

function formatAddress(family: Family, buf: Buffer, at: number): string {
  return family === 4 ? formatIpv4(buf.subarray(at, at + 4)) : formatIpv6(buf.subarray(at, at + 16));
}

/** Every inet_diag_msg in an answer (netlink messages, each 4-byte aligned; attributes after it skipped). */
export function parseAnswer(protocol: Protocol, answer: Buffer): DiagSocket[] {
  const out: DiagSocket[] = [];
  let at = 0;
  while (at + NLMSG_HDRLEN <= answer.length) {
    const length = r32(answer, at);
    if (length < NLMSG_HDRLEN || at + length > answer.length) break;
    if (r16(answer, at + 4) === SOCK_DIAG_BY_FAMILY && length >= NLMSG_HDRLEN + MSG_BYTES) {
      const m = at + NLMSG_HDRLEN;
      const family: Family = answer[m] === AF[6] ? 6 : 4;
      out.push({
        family,
        protocol,
        state: answer[m + 1] ?? 0,
        localPort: answer.readUInt16BE(m + 4),
        remotePort: answer.readUInt16BE(m + 6),
        localAddress: formatAddress(family, answer, m + 8),
        remoteAddress: formatAddress(family, answer, m + 24),
        uid: r32(answer, m + 64),
        inode: r32(answer, m + 68),
      });
    }
    at += (length + 3) & ~3;
  }
  return out;
}

/** Passes of a dump that found sockets, at most (see dumpSockets). */
export const MAX_DUMP_PASSES = 5;

/**
 * A first datagram at most this big had room for another answer: the kernel fills a dump's datagram until the
 * next socket does not fit, in at least NLMSG_GOODSIZE (a page less the buffer's overhead: 3,776 bytes with 4 KiB
 * pages), and one socket's answer is far under 512 bytes (72 + headers and the few attributes it adds). So
 * the walk ended there: nothing was resumed, nothing could be skipped.
 */
export const ROOM_LEFT_BYTES = 3_776 - 512;

const socketKey = (s: DiagSocket) =>
  s.inode !== 0 ? `i${s.inode}` : `${s.state} ${s.localAddress} ${s.localPort} ${s.remoteAddress} ${s.remotePort}`;

/**
 * The sockets of this network namespace of one family and protocol in `states` (with `port`, of that local port
 * only); undefined without the addon.
 *
 * A dump is answered in datagrams (the first ~30 sockets), and the kernel resumes it between them by a position
 * within a hash slot, where every UDP socket of a port sits: a socket closed meanwhile shifts the rest and the
 * next is skipped. Another user closing and binding sockets on a port could so hide a listener (stop 32's review:
 * root's 127.0.0.1:5353 missing from 21 of 300 answers behind 30 of nobody's), and the answer alone cannot say
 * it happened: a dump that found anything is resumed at least once (its DONE comes in a datagram of its own),
 * and one whose skipped socket was its last looks complete. So a dump that found sockets is asked again until
 * two passes in a row see the same ones (MAX_DUMP_PASSES at most, each socket is one inode), and every socket a
 * pass saw is listed: those of that moment, give or take one closed during the question. A dump whose answers
 * all came in a first datagram with room left was not resumed (ROOM_LEFT_BYTES): asked once.
 */
export function dumpSockets(
  family: Family,
  protocol: Protocol,
  states: number,
  port?: number,
): DiagSocket[] | undefined {
  const binding = sockDiag();
  if (!binding) return undefined;
  const q = question(family, protocol, states, { port });
  const answer = binding.request(q);
  const sockets = parseAnswer(protocol, answer);
  // All in one datagram with room left (a laptop's listeners): the kernel's walk ended in it, nothing resumed.
  if (sockets.length === 0 || (answer.firstDatagram ?? Number.POSITIVE_INFINITY) <= ROOM_LEFT_BYTES) return sockets;
  const seen = new Map(sockets.map((s) => [socketKey(s), s]));
  let last = new Set(seen.keys());
  for (let pass = 2; pass <= MAX_DUMP_PASSES; pass++) {
    const now = new Map(parseAnswer(protocol, binding.request(q)).map((s) => [socketKey(s), s]));
    for (const [key, s] of now) if (!seen.has(key)) seen.set(key, s);
    if (now.size === last.size && [...now.keys()].every((k) => last.has(k))) break;
    last = new Set(now.keys());
  }
  return [...seen.values()];
}

/**
 * The socket whose local end is `local` and remote end `remote` (the kernel's exact lookup), null when there is
 * none; undefined without the addon.
 */
export function findSocket(
  family: Family,
  protocol: Protocol,
  local: Endpoint,
  remote: Endpoint,
): DiagSocket | null | undefined {
  const binding = sockDiag();
  if (!binding) return undefined;
  let answer: Buffer;
  try {
    answer = binding.request(question(family, protocol, 0xffffffff, { exact: { local, remote } }));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  return parseAnswer(protocol, answer)[0] ?? null;
}
