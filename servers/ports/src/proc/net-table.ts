/**
 * The kernel's socket tables, /proc/net/{tcp,tcp6,udp,udp6}: listening TCP sockets (state 0A) and bound,
 * unconnected UDP sockets (state 07, what `ss -lu` lists). These files are per network namespace: they show
 * the namespace of the process that reads them, so the server reports its own namespace.
 */
import {
  DiagError,
  type DiagSocket,
  dumpSockets,
  NET_TABLE_ROW,
  readPieces,
  stateMask,
  TCP_STATE,
} from "@roadnerd/conventions";
import { decodeHexAddress, hostPortOf } from "./hex-address.ts";

export const PROTOS = ["tcp", "tcp6", "udp", "udp6"] as const;
export type Proto = (typeof PROTOS)[number];

const LISTEN_STATE: Record<Proto, string> = { tcp: "0A", tcp6: "0A", udp: "07", udp6: "07" };

export interface TableSocket {
  proto: Proto;
  address: string;
  port: number;
  /** addr:port, IPv6 in brackets. */
  local: string;
  uid: number;
  /** The socket's inode: what /proc/<pid>/fd/<n> links to as socket:[inode]. 0 for a socket no file holds. */
  inode: number;
  /** A TCP socket bound but not listening (netlink on Linux ≥ 6.8, when asked): a bind to it fails all the same. */
  bound?: true;
}

/**
 * Parse one table; only the listening rows. Lines that do not parse are skipped (the header, a torn read). A
 * socket is listed once: a table read in more than one piece while sockets close before the resume point can
 * list a row twice (the kernel resumes by position), and one socket is one inode.
 */
export function parseNetTable(proto: Proto, text: string): TableSocket[] {
  const out: TableSocket[] = [];
  const seen = new Set<number>();
  const rows: string[] = [];
  // Only the listening rows are split into fields: a table of 50,000 connections has a few listeners.
  scanRows(text, (start, _localStart, _localEnd, state, end) => {
    if (state === LISTEN_STATE[proto]) rows.push(text.slice(start, end));
  });
  for (const line of rows) {
    // sl local rem st tx:rx tr:when retrnsmt uid timeout inode …
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || !/^\d+:$/.test(f[0] ?? "")) continue;
    if (f[3] !== LISTEN_STATE[proto]) continue;
    const [hexAddr = "", hexPort = ""] = (f[1] ?? "").split(":");
    let address: string;
    try {
      address = decodeHexAddress(hexAddr);
    } catch {
      continue;
    }
    const port = Number.parseInt(hexPort, 16);
    const inode = Number(f[9]);
    if (inode > 0) {
      if (seen.has(inode)) continue;
      seen.add(inode);
    }
    out.push({ proto, address, port, local: hostPortOf(address, port), uid: Number(f[7]), inode });
  }
  return out;
}

/** TCP states as the kernel numbers them (include/net/tcp_states.h), for the rows that are not listeners. */
const TCP_STATES: Record<string, string> = {
  "01": "established",
  "02": "syn_sent",
  "03": "syn_recv",
  "04": "fin_wait1",
  "05": "fin_wait2",
  "06": "time_wait",
  "07": "close",
  "08": "close_wait",
  "09": "last_ack",
  "0B": "closing",
};

export interface TcpConnection {
  port: number;
  state: string;
}

/** The local port and state of every TCP row that is not a listener (connections, TIME_WAIT…). */
export function parseTcpConnections(text: string): TcpConnection[] {
  const out: TcpConnection[] = [];
  scanRows(text, (_start, localStart, localEnd, state) => {
    if (state === "0A") return;
    const port = Number.parseInt(text.slice(text.lastIndexOf(":", localEnd) + 1, localEnd), 16);
    if (localStart < localEnd && Number.isFinite(port)) out.push({ port, state: TCP_STATES[state] ?? "other" });
  });
  return out;
}

const isDigit = (c: number) => c >= 48 && c <= 57;
const MIN_ROW_TAIL = 56;

/**
 * Each row of a table — `sl: local rem st tx:rx …`, the kernel's fixed layout — with where it starts and ends,
 * where its local address is and its state, found by position instead of splitting every line (a table with
 * 50,000 connections took ~80 ms a parse split, issue 17). The header, a line that is not a row (a torn read:
 * fewer fields than a row has) and a row numbered other than `<digits>:` are skipped, as the split parsers did.
 */
function scanRows(
  text: string,
  onRow: (start: number, localStart: number, localEnd: number, state: string, end: number) => void,
): void {
  let at = 0;
  while (at < text.length) {
    let end = text.indexOf("\n", at);
    if (end < 0) end = text.length;
    const colon = text.indexOf(": ", at);
    if (colon > at && colon < end) {
      let i = at;
      while (i < colon && text.charCodeAt(i) === 32) i++;
      let digits = i < colon;
      for (; i < colon && digits; i++) digits = isDigit(text.charCodeAt(i));
      const localStart = colon + 2;
      const localEnd = text.indexOf(" ", localStart);
      const remEnd = localEnd < 0 ? -1 : text.indexOf(" ", localEnd + 1);
      // A row goes on past its state: ` %08X:%08X %02X:%08lX %08X %5u %8d %lu…` (tx:rx, timer, retransmits, uid,
      // timeout, inode: 56 characters at least). A line cut before its inode is not one.
      if (digits && localEnd > localStart && remEnd > localEnd + 1 && end - (remEnd + 3) >= MIN_ROW_TAIL) {
        if (text.charCodeAt(remEnd + 3) === 32)
          onRow(at, localStart, localEnd, text.slice(remEnd + 1, remEnd + 3), end);
      }
    }
    at = end + 1;
  }
}

export interface NetTables {
  listening: TableSocket[];
  connections: TcpConnection[];
  /** Where the listeners came from: the kernel's socket diagnostics (netlink) or /proc/net's tables. */
  source: "netlink" | "proc";
}

/**
 * States only a row of the kernel's established hash can be in (not 0A LISTEN, nor 07 CLOSE, which a listener
 * being closed shows while still in the listening hash): /proc/net/tcp{,6} lists the listening hash first, so
 * such a row means every listener has been listed.
 */
const PAST_LISTENERS = /^\s*\d+: \S+ \S+ (0[1-689]|0B) /m;
/**
 * Where reading a table's listening part stops: 256 MiB (~1.8 million rows; under V8's longest string). Past it
 * the read fails (E_TOO_LARGE), never a shorter list: a local user's listeners could otherwise push some out.
 */
const MAX_TABLE_BYTES = 256 * 1024 * 1024;

/**
 * A table read piece by piece (the kernel's readPieces), whole or, `listenersOnly`, up to the first row of an
 * established connection, whole lines only. The read that finds a table's end walks the kernel's connection
 * hash again (3.3 ms in an empty namespace): stopping at the first connection (there is usually one: the
 * caller's own) saves that walk and the rest of the first, and a table read to its end stops at its short last
 * piece (ADR 0061) rather than make that read.
 */
async function readTable(path: string, listenersOnly: boolean, signal?: AbortSignal): Promise<string> {
  let text = "";
  let part: string | undefined;
  const take = (piece: string): boolean => {
    text += piece;
    if (!listenersOnly) return false;
    // The lines before the first connection (which may be cut: the read stops mid-table).
    const past = PAST_LISTENERS.exec(text);
    if (past) part = text.slice(0, past.index);
    return part !== undefined;
  };
  const ended = await readPieces(path, take, { maxBytes: MAX_TABLE_BYTES, signal, rowsAtMost: NET_TABLE_ROW });
  if (ended === "limit") {
    const where = listenersOnly ? " before its first connection" : "";
    throw new DiagError("E_TOO_LARGE", `${path} is larger than ${MAX_TABLE_BYTES} bytes${where}`);
  }
  return part ?? text;
}

/**
 * Read and parse every table; a table that is missing (IPv6 disabled) adds nothing, another failure throws.
 * Reading the TCP tables makes the kernel walk its whole connection hash (about 2 × 1.6 ms each on an idle
 * machine), so the tools read them through their runtime's ProcReads, which shares a read in flight
 * (proc-reads.ts). `connections: false` (listeners only): the TCP tables are read up to their first connection.
 */
export async function readAllTables(
  root = "/proc/net",
  signal?: AbortSignal,
  { connections = true }: { connections?: boolean } = {},
): Promise<NetTables> {
  const tables = await Promise.all(
    PROTOS.map(async (proto) => {
      try {
        const path = `${root}/${proto}`;
        const whole = connections || !proto.startsWith("tcp");
        const text = await readTable(path, !whole, signal);
        return {
          listening: parseNetTable(proto, text),
          connections: connections && proto.startsWith("tcp") ? parseTcpConnections(text) : [],
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT" && proto.endsWith("6"))
          return { listening: [], connections: [] };
        throw err;
      }
    }),
  );
  return {
    listening: tables.flatMap((t) => t.listening),
    connections: tables.flatMap((t) => t.connections),
    source: "proc",
  };
}

/** The table each (protocol, family) of the kernel's socket diagnostics stands for. */
const PROTO_OF: Record<DiagSocket["protocol"], Record<DiagSocket["family"], Proto>> = {
  tcp: { 4: "tcp", 6: "tcp6" },
  udp: { 4: "udp", 6: "udp6" },
};

/**
 * The same listeners from the kernel's socket diagnostics (netlink, ADR 0064): a LISTEN-only question skips the
 * connection hash that every read of /proc/net/tcp walks. With `port`, the kernel answers that port's only; a
 * dump resumed across datagrams is asked again until it holds still (dumpSockets). undefined when the
 * addon is not there (then /proc). A family the kernel does not have (IPv6 disabled) adds nothing, as a missing
 * tcp6 table does.
 */
export function netlinkListeners(port?: number): TableSocket[] | undefined {
  return netlinkSockets(
    [
      ["tcp", stateMask(TCP_STATE.listen)],
      ["udp", stateMask(TCP_STATE.close)],
    ],
    port,
  );
}

/**
 * TCP sockets bound but neither listening nor connected (TCP_BOUND_INACTIVE: Linux 6.8 and later dump them when
 * asked; older kernels none): "address already in use" with nothing listening. Costly: the kernel walks its whole
 * bind hash for it, ~2.7 ms a family, synchronously, a port filter or not (proc-reads.ts asks for every port at
 * once, only when a port asked about has no listener, and keeps the answer a moment). undefined without the addon.
 */
export function netlinkBoundOnly(): TableSocket[] | undefined {
  return netlinkSockets([["tcp", stateMask(TCP_STATE.bound_inactive)]], undefined)?.map((s) => ({
    ...s,
    bound: true,
  }));
}

function netlinkSockets(
  questions: ReadonlyArray<readonly [DiagSocket["protocol"], number]>,
  port: number | undefined,
): TableSocket[] | undefined {
  const out: TableSocket[] = [];
  for (const [protocol, states] of questions) {
    for (const family of [4, 6] as const) {
      let sockets: DiagSocket[] | undefined;
      try {
        sockets = dumpSockets(family, protocol, states, port);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (family === 6 && (code === "EAFNOSUPPORT" || code === "ENOENT")) continue;
        // Past the module's 64 MiB (~900,000 listeners): refused, never a shorter list, and not `ss`'s to list
        // (it would take seconds for the same answer: stop 31's review).
        if (code === "E2BIG")
          throw new DiagError("E_TOO_LARGE", `more listening ${protocol} sockets than one answer may hold (64 MiB)`);
        throw err;
      }
      if (!sockets) return undefined;
      // One socket per inode: dumpSockets merged its passes by inode, and no socket is in two families' dumps.
      for (const s of sockets) {
        const proto = PROTO_OF[protocol][family];
        const local = hostPortOf(s.localAddress, s.localPort);
        out.push({ proto, address: s.localAddress, port: s.localPort, local, uid: s.uid, inode: s.inode });
      }
    }
  }
  return out;
}
