/**
 * Every listener of this server's network namespace with the pids that hold it: the kernel's socket
 * diagnostics (netlink, ADR 0064) or the /proc/net tables, plus the holders from /proc/<pid>/fd (measured faster
 * than spawning ss, README "Where the answers come from, and speed"), or `ss -Hltnup` when /proc/net cannot be
 * read (SOCKETS_SOURCE=auto) or when asked to (SOCKETS_SOURCE=ss). A question about one port counts that port's
 * TCP connections too, which only the whole tables give: /proc/net for those (its listeners from netlink).
 */
import { command, DiagError, type ToolContext } from "@roadnerd/conventions";
import type { PortsConfig } from "./kit.ts";
import type { Proto, TableSocket, TcpConnection } from "./proc/net-table.ts";
import { procReads } from "./proc/proc-reads.ts";
import { parseSs } from "./ss/parse-ss.ts";

/** iproute2's listening TCP and UDP sockets, numeric, with processes, no header. */
export const ssListening = command("ss", ["-Hltnup"]);

export interface Listener {
  proto: Proto;
  address: string;
  port: number;
  local: string;
  /** Null when the source was ss (it does not print inodes). */
  inode: number | null;
  pids: number[];
  /** TCP, bound but not listening (asked for one port, netlink on Linux ≥ 6.8). */
  bound?: true;
}

export interface ListenerSnapshot {
  listeners: Listener[];
  source: "netlink" | "proc" | "ss";
  /** Processes whose sockets we could not look at (another user's, without root); null when ss answered. */
  unreadable: number | null;
  /** The bounded search of threads with files of their own stopped before it found every holder. */
  searchCut?: boolean;
  /** TCP connections (not listeners) by state whose local port is the port asked for; null when ss answered. */
  connections: Record<string, number> | null;
}

export type ListenerContext = Pick<ToolContext<PortsConfig>, "exec" | "signal" | "config" | "log" | "use">;

const byPortThenProto = (a: Listener, b: Listener) =>
  a.port - b.port ||
  a.proto.localeCompare(b.proto) ||
  a.local.localeCompare(b.local) ||
  (a.pids[0] ?? 0) - (b.pids[0] ?? 0) ||
  (a.inode ?? 0) - (b.inode ?? 0);

const toListener = (s: TableSocket): Listener => ({
  proto: s.proto,
  address: s.address,
  port: s.port,
  local: s.local,
  inode: s.inode,
  pids: [],
  ...(s.bound ? { bound: true as const } : {}),
});

/** The tables only, no owners: what the port watch polls each round. */
export async function listenersFromTables(
  ctx: Pick<ListenerContext, "signal" | "use" | "config">,
  port?: number,
): Promise<Listener[]> {
  const netlink = ctx.config.SOCKETS_SOURCE === "auto";
  const { listening } = await ctx.use(procReads).tables(ctx.signal, { connections: false, netlink, port });
  return listening.filter((s) => port === undefined || s.port === port).map(toListener);
}

function countStates(connections: readonly TcpConnection[], port: number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const c of connections) if (c.port === port) counts[c.state] = (counts[c.state] ?? 0) + 1;
  return counts;
}

async function fromProc(ctx: ListenerContext, port?: number): Promise<ListenerSnapshot> {
  const reads = ctx.use(procReads);
  // Connections are counted for one port only (who_uses_port); listing every listener needs none of them.
  const tables = await reads.tables(ctx.signal, {
    connections: port !== undefined,
    netlink: ctx.config.SOCKETS_SOURCE === "auto",
    port,
  });
  let listeners = tables.listening.filter((s) => port === undefined || s.port === port).map(toListener);
  // Nothing listens on the port asked about: a TCP socket bound to it without listening may still hold it.
  if (port !== undefined && listeners.length === 0 && tables.source === "netlink") {
    listeners = (await reads.boundOnly(port, ctx.signal)).map(toListener);
  }
  const connections = port === undefined ? null : countStates(tables.connections, port);
  // Nothing listens: no need to look at every process's descriptors.
  if (listeners.length === 0) return { listeners, source: tables.source, unreadable: null, connections };
  const { holders, unreadable, searchCut } = await reads.owners(
    new Set(listeners.map((l) => l.inode ?? 0).filter((i) => i > 0)),
    ctx.signal,
  );
  for (const l of listeners) l.pids = holders.get(l.inode ?? 0) ?? [];
  return {
    listeners: listeners.sort(byPortThenProto),
    source: tables.source,
    unreadable,
    connections,
    ...(searchCut ? { searchCut } : {}),
  };
}

async function fromSs(ctx: ListenerContext, port?: number): Promise<ListenerSnapshot> {
  const r = await ctx.exec(ssListening);
  if (r.exitCode !== 0)
    throw new DiagError("E_EXEC_FAILED", `ss -Hltnup exited ${r.exitCode}: ${r.stderr.slice(0, 200)}`);
  const listeners = parseSs(r.stdout)
    .filter((l) => port === undefined || l.port === port)
    .map((l) => ({ ...l, inode: null }));
  return { listeners: listeners.sort(byPortThenProto), source: "ss", unreadable: null, connections: null };
}

export async function readListeners(ctx: ListenerContext, port?: number): Promise<ListenerSnapshot> {
  const source = ctx.config.SOCKETS_SOURCE;
  if (source === "ss") return fromSs(ctx, port);
  try {
    return await fromProc(ctx, port);
  } catch (err) {
    if (source === "proc" || err instanceof DiagError || ctx.signal.aborted) throw err;
    ctx.log.warn({ err: (err as Error).message }, "/proc/net unreadable; asking ss");
    return fromSs(ctx, port);
  }
}
