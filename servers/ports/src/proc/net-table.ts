/**
 * The kernel's socket tables, /proc/net/{tcp,tcp6,udp,udp6}: listening TCP sockets (state 0A) and bound,
 * unconnected UDP sockets (state 07, what `ss -lu` lists). These files are per network namespace: they show
 * the namespace of the process that reads them, so the server reports its own namespace.
 */
import { readFile } from "node:fs/promises";
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
}

/** Parse one table; only the listening rows. Lines that do not parse are skipped (the header, a torn read). */
export function parseNetTable(proto: Proto, text: string): TableSocket[] {
  const out: TableSocket[] = [];
  for (const line of text.split("\n")) {
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
    out.push({ proto, address, port, local: hostPortOf(address, port), uid: Number(f[7]), inode: Number(f[9]) });
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
  for (const line of text.split("\n")) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || !/^\d+:$/.test(f[0] ?? "") || f[3] === "0A") continue;
    const port = Number.parseInt((f[1] ?? "").split(":")[1] ?? "", 16);
    if (Number.isFinite(port)) out.push({ port, state: TCP_STATES[f[3] ?? ""] ?? "other" });
  }
  return out;
}

export interface NetTables {
  listening: TableSocket[];
  connections: TcpConnection[];
}

/**
 * Read and parse every table; a table that is missing (IPv6 disabled) adds nothing, another failure throws.
 * Reading the TCP tables makes the kernel walk its whole connection hash (about 4 ms each on an idle machine),
 * so the tools read them through their runtime's ProcReads, which shares a read in flight (proc-reads.ts).
 */
export async function readAllTables(root = "/proc/net", signal?: AbortSignal): Promise<NetTables> {
  const tables = await Promise.all(
    PROTOS.map(async (proto) => {
      try {
        const text = await readFile(`${root}/${proto}`, { encoding: "utf8", signal });
        return {
          listening: parseNetTable(proto, text),
          connections: proto.startsWith("tcp") ? parseTcpConnections(text) : [],
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT" && proto.endsWith("6"))
          return { listening: [], connections: [] };
        throw err;
      }
    }),
  );
  return { listening: tables.flatMap((t) => t.listening), connections: tables.flatMap((t) => t.connections) };
}
