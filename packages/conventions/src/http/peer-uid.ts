/**
 * Who is calling over loopback: the uid that owns the peer's end of a loopback TCP connection: the client's
 * socket is the one whose local end is our peer and whose remote end is us. The kernel's exact lookup answers it
 * (netlink sock_diag, ADR 0064: ~0.01 ms); where that cannot be asked, the socket tables (/proc/net/tcp and
 * tcp6, whose every read walks the kernel's connection hash) are read as before. The trust model (docs/security.md, ADR 0025): on loopback, a caller must be
 * this process's own user, root, the user who ran sudo (SUDO_UID), or a uid ALLOWED_UIDS names; anyone else
 * needs the bearer token. Where the tables cannot be read (not Linux), the check is skipped, once logged.
 */
import { Socket } from "node:net";
import { networkInterfaces } from "node:os";
import { ipFamily } from "../define/fields.ts";
import { NET_TABLE_ROW, readPieces, readPiecesSync } from "../fs/read-pieces.ts";
import { ipBytes } from "../netlink/addresses.ts";
import { type Family, findSocket, TCP_STATE } from "../netlink/sock-diag.ts";

/** Hex address of /proc/net/tcp{,6} (each 32-bit word in host order, little-endian here) → bytes. */
function bytesOf(hex: string): number[] {
  const out: number[] = [];
  for (let w = 0; w < hex.length; w += 8) {
    const word = hex.slice(w, w + 8);
    for (let b = 6; b >= 0; b -= 2) out.push(Number.parseInt(word.slice(b, b + 2), 16));
  }
  return out;
}

/** An address as the tables spell it (IPv4 4 bytes, IPv6 16; an IPv4-mapped IPv6 peer appears in tcp6). */
const bytesOfIp = (ip: string): number[] | undefined => (ipFamily(ip) === 0 ? undefined : ipBytes(ip));

/** An IPv4-mapped IPv6 address (::ffff:a.b.c.d) as its IPv4 bytes; any other address as it is. */
function unmapped(bytes: number[]): number[] {
  const mapped =
    bytes.length === 16 && bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 255 && bytes[11] === 255;
  return mapped ? bytes.slice(12) : bytes;
}

/**
 * The same address, an IPv4-mapped one equal to its IPv4 form: a server listening on "::" sees an IPv4 client
 * as ::ffff:127.0.0.1 while the client's own socket, in tcp, has 127.0.0.1 (before, no row matched and even
 * root was refused as an unknown user).
 */
function same(a: number[] | undefined, b: number[]): boolean {
  if (a === undefined) return false;
  const [x, y] = [unmapped(a), unmapped(b)];
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/** A row of the socket tables: its local and remote address (hex, as the tables spell them) and its owner. */
interface Row {
  local: string;
  remote: string;
  uid: number;
}

/** The tables, rows keyed by `localPort:remotePort`; undefined when neither can be read (not Linux). */
type Tables = Map<string, Row[]> | undefined;

/** Adds the rows among `lines` (whole lines of a table; its header and TIME_WAIT rows left out) to `rows`. */
function addRows(rows: Map<string, Row[]>, lines: string): void {
  for (const line of lines.split("\n")) {
    const f = line.trim().split(/\s+/);
    if (!/^\d+:$/.test(f[0] ?? "")) continue;
    // TIME_WAIT (06): a closed connection's leftover, owned by no one (uid 0); it may share a live one's ports.
    // Inode 0: no process holds the socket (a closed one's FIN_WAIT2 leftover also says uid 0): no owner either.
    if (f[3] === "06" || f[9] === "0") continue;
    const [la = "", lp = ""] = (f[1] ?? "").split(":");
    const [ra = "", rp = ""] = (f[2] ?? "").split(":");
    const key = `${Number.parseInt(lp, 16)}:${Number.parseInt(rp, 16)}`;
    const row = { local: la, remote: ra, uid: Number(f[7]) };
    const list = rows.get(key);
    if (list) list.push(row);
    else rows.set(key, [row]);
  }
}

const TABLES = ["/proc/net/tcp", "/proc/net/tcp6"];

/** A lookup's question: the rows keyed `peerPort:localPort` from the peer's address to ours. */
interface Want {
  key: string;
  peer: number[] | undefined;
  local: number[] | undefined;
}

function wantOf(peer: { address: string; port: number }, local: { address: string; port: number }): Want {
  return { key: `${peer.port}:${local.port}`, peer: bytesOfIp(peer.address), local: bytesOfIp(local.address) };
}

/** The uids of the rows that answer `want`. */
function uidsIn(tables: Map<string, Row[]>, want: Want): number[] {
  const rows = tables.get(want.key) ?? [];
  return rows.filter((r) => same(want.peer, bytesOf(r.local)) && same(want.local, bytesOf(r.remote))).map((r) => r.uid);
}

/**
 * Where reading a table stops, found or not: 1 GiB, ~7 million rows (a row is a socket or a TIME_WAIT leftover,
 * which any local user can make by the hundred thousand; 130,000 of uid 65534 pushed root's row past the 4 MiB
 * that 1,024 reads were: refused as an unknown user, stop 28's review). Past the bound the lookup fails closed
 * (no row: refused), as it must: "unknown" would let every local user in.
 */
export const MAX_TABLE_BYTES = 1024 * 1024 * 1024;

/**
 * One read of the tables for `wants`: rows parsed piece by piece (fs/read-pieces.ts), and the read stops as
 * soon as every want has its row: a lookup walks the kernel's connection hash up to its row once, instead of the
 * whole of it twice (in an empty namespace, `/proc/net/tcp` to its end 3.3 ms, to the row 0.8–1.7 ms). tcp
 * first: when it answers every want (a client's IPv4 socket, the usual one) tcp6 is not read. Two live rows
 * cannot share a connection's addresses and ports, so the row found is the only one. A table that cannot be
 * opened adds nothing; one that fails mid-read keeps its rows so far.
 */
function tableRead(wants: readonly Want[]) {
  const rows = new Map<string, Row[]>();
  let unanswered = [...wants];
  let readable = false;
  const opened = () => {
    readable = true;
  };
  /** Takes one table's text as it arrives ("" at its end); true once every want is answered (stop reading). */
  const taker = () => {
    let rest = "";
    return (text: string): boolean => {
      // The end: its last line may lack a newline. (Stopped early, the unfinished line is left unparsed.)
      const all = rest + text;
      const cut = text === "" ? all.length : all.lastIndexOf("\n") + 1;
      addRows(rows, all.slice(0, cut));
      rest = all.slice(cut);
      unanswered = unanswered.filter((w) => uidsIn(rows, w).length === 0);
      return unanswered.length === 0;
    };
  };
  const options = { maxBytes: MAX_TABLE_BYTES, firstBytes: 256, opened, rowsAtMost: NET_TABLE_ROW };
  return {
    /** Every table in turn until the wants are answered, off the loop. */
    async from(files: readonly string[]): Promise<Tables> {
      for (const file of files) {
        if (unanswered.length === 0) break;
        await readPieces(file, taker(), options).catch(() => undefined);
      }
      return readable ? rows : undefined;
    },
    /** The same on the loop. */
    fromNow(files: readonly string[]): Tables {
      for (const file of files) {
        if (unanswered.length === 0) break;
        try {
          readPiecesSync(file, taker(), options);
        } catch {
          // As in from().
        }
      }
      return readable ? rows : undefined;
    },
  };
}

/** The tables off the loop (a libuv thread walks the kernel's hash; a user's few lookups). */
function readTables(wants: readonly Want[], files: readonly string[] = TABLES): Promise<Tables> {
  return tableRead(wants).from(files);
}

/** The same read on the loop (a flood's batch): without a libuv round trip per piece through a busy loop. */
function readTablesNow(wants: readonly Want[]): Tables {
  return tableRead(wants).fromNow(TABLES);
}

/**
 * The uids owning a socket from `peer` to `local` as `files` (tables in /proc/net/tcp's format) say: the lookup's
 * own read, for tests of the reading itself on tables written to disk.
 */
export async function uidsInFiles(
  files: readonly string[],
  peer: { address: string; port: number },
  local: { address: string; port: number },
): Promise<number[] | undefined> {
  const want = wantOf(peer, local);
  const tables = await readTables([want], files);
  return tables === undefined ? undefined : uidsIn(tables, want);
}

/** A read of the tables to come: the lookups that joined it and what they ask. */
interface Pending {
  tables: Promise<Tables>;
  joined: number;
  wants: Want[];
}

/** The next read of the tables, which every lookup made before it starts joins. */
let queued: Pending | undefined;
/** The read under way (or done): reads never overlap. */
let running: Promise<unknown> = Promise.resolve();
/** When the last read on the loop started and what it cost (ms), to space such reads by their cost. */
let lastStart = Number.NEGATIVE_INFINITY;
let lastCost = 0;
/** From this many lookups waiting for one read on, the read is done on the loop (a flood, not a user). */
const READ_NOW_AT = 32;
/** A read on the loop starts this many of its costs after the last one started: ≤ 20% of the loop. */
const SPACING = 5;

/**
 * The tables as they are after this call. Reads are shared: a lookup joins the next read, never one already
 * under way (which may predate its connection); at most one runs and one waits (issue 18: another uid's call
 * took 4–21 s when every connection had its own read). A few lookups (a user's calls) are read off the loop.
 * A flood's batch is read on it: the kernel hands the table out 4 KiB per read, and readFile's round trip per
 * piece through a loop kept busy by a flood of keep-alive requests took 0.3–2.5 s (stop 26's B1); on the loop
 * the same read takes ~20 ms, and such reads are spaced by their cost so a flood cannot make the server do
 * nothing but read.
 */
function freshTables(want: Want): Promise<Tables> {
  if (queued) {
    queued.joined += 1;
    queued.wants.push(want);
    return queued.tables;
  }
  const entry: Pending = { tables: Promise.resolve(undefined), joined: 1, wants: [want] };
  entry.tables = running.then(
    () =>
      new Promise<Tables>((resolve, reject) => {
        const read = (): void => {
          if (queued === entry) queued = undefined;
          if (entry.joined < READ_NOW_AT) return void readTables(entry.wants).then(resolve, reject);
          lastStart = performance.now();
          try {
            resolve(readTablesNow(entry.wants));
          } catch (err) {
            reject(err);
          } finally {
            lastCost = performance.now() - lastStart;
          }
        };
        const wait = lastStart + SPACING * lastCost - performance.now();
        // setImmediate even without a wait: every lookup of this turn (a batch of connections) joins the read.
        if (wait > 0) setTimeout(read, wait);
        else setImmediate(read);
      }),
  );
  queued = entry;
  running = entry.tables.catch(() => undefined);
  return entry.tables;
}

interface Endpoint {
  address: string;
  port: number;
}

/** The IPv4 form of an IPv4 or IPv4-mapped address; undefined for another IPv6 one. */
function asIpv4(address: string): string | undefined {
  const bytes = bytesOfIp(address);
  if (bytes === undefined) return undefined;
  const plain = unmapped(bytes);
  return plain.length === 4 ? plain.join(".") : undefined;
}

/** Where the client's socket may be: an IPv4 one (an IPv4 client, even of a dual-stack server), then IPv6. */
function socketsToAsk(peer: Endpoint, local: Endpoint): Array<{ family: Family; peer: Endpoint; local: Endpoint }> {
  const out: Array<{ family: Family; peer: Endpoint; local: Endpoint }> = [];
  const [peer4, local4] = [asIpv4(peer.address), asIpv4(local.address)];
  if (peer4 && local4) out.push({ family: 4, peer: { ...peer, address: peer4 }, local: { ...local, address: local4 } });
  if (ipFamily(peer.address) === 6 && ipFamily(local.address) === 6) out.push({ family: 6, peer, local });
  return out;
}

/**
 * A socket a process holds, of a connection: not a listener (the kernel's lookup falls back to one on the
 * client's port), not a leftover of a closed connection (TIME_WAIT, or a FIN_WAIT2 one: inode 0, "uid 0").
 */
const liveClient = (s: { state: number; inode: number }) =>
  s.inode !== 0 &&
  s.state !== TCP_STATE.listen &&
  s.state !== TCP_STATE.time_wait &&
  s.state !== TCP_STATE.new_syn_recv;

/**
 * The kernel's exact lookup of the client's socket (ADR 0064): [] when there is no live one held by a process,
 * undefined when it cannot be asked (no addon, the kernel refused): then the tables are read.
 */
function uidsByLookup(peer: Endpoint, local: Endpoint): number[] | undefined {
  try {
    for (const ask of socketsToAsk(peer, local)) {
      const found = findSocket(ask.family, "tcp", ask.peer, ask.local);
      if (found === undefined) return undefined;
      if (found && liveClient(found)) return [found.uid];
    }
    return [];
  } catch {
    return undefined;
  }
}

/** The uids owning a socket from `peer` to `local` (normally one); undefined when the tables cannot be read. */
export async function peerUids(peer: Endpoint, local: Endpoint): Promise<number[] | undefined> {
  const asked = uidsByLookup(peer, local);
  if (asked !== undefined) return asked;
  const want = wantOf(peer, local);
  const tables = await freshTables(want);
  return tables === undefined ? undefined : uidsIn(tables, want);
}

export interface UidTrust {
  /** The uids that may call without a token; "*" for every local user. */
  allowed: ReadonlySet<number> | "*";
}

/** This process's user, root, and the user who ran sudo: the laptop's one user, whatever started us. */
export function defaultUids(sudoUid: number | undefined, extra: readonly number[]): Set<number> {
  const uids = new Set<number>([0, ...extra]);
  if (typeof process.getuid === "function") uids.add(process.getuid());
  if (sudoUid !== undefined) uids.add(sudoUid);
  return uids;
}

/** Who may call over loopback without the token, from the config's ALLOWED_UIDS and SUDO_UID (ADR 0025). */
export function uidTrust(config: { ALLOWED_UIDS: readonly number[] | "*"; SUDO_UID?: number | undefined }): UidTrust {
  if (config.ALLOWED_UIDS === "*") return { allowed: "*" };
  return { allowed: defaultUids(config.SUDO_UID, config.ALLOWED_UIDS) };
}

const isLoopback = (address: string) => /^(127\.|::1$|::ffff:127\.)/.test(address);

/** An address as os.networkInterfaces() writes it: no IPv4-mapped prefix, no IPv6 zone. */
const bareAddress = (address: string) => address.replace(/^::ffff:(?=\d+\.)/, "").replace(/%.*$/, "");

/** One of this host's own addresses as os.networkInterfaces() lists them (interfaces up and running only). */
function isOwnAddress(address: string): boolean {
  const wanted = bareAddress(address);
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (bareAddress(a.address) === wanted) return true;
  return false;
}

const here = new WeakMap<Socket, boolean>();

/**
 * The client's own socket is in this network namespace (the kernel's exact lookup, any state but a listener
 * the lookup falls back to): the caller is on this host, whatever address it used, one on an interface that is
 * down or has no carrier, or of an AnyIP route, which os.networkInterfaces() does not list (stop 32's second
 * review served nobody as root from each). Or its address is one os.networkInterfaces() lists: a client that
 * reset the connection before the lookup is still known as local (and refused, as gone).
 */
function callerHere(socket: Socket): boolean {
  let known = here.get(socket);
  if (known === undefined) {
    const { peer, local } = endsOf(socket);
    known = clientSocketHere(peer, local) || isOwnAddress(peer.address);
    here.set(socket, known);
  }
  return known;
}

/** The kernel's exact lookup finds the client's socket (not a listener it falls back to) in this namespace. */
function clientSocketHere(peer: Endpoint, local: Endpoint): boolean {
  try {
    return socketsToAsk(peer, local).some((ask) => {
      const found = findSocket(ask.family, "tcp", ask.peer, ask.local);
      return found ? found.state !== TCP_STATE.listen : false;
    });
  } catch {
    return false;
  }
}

/** A connection's two ends as the lookups take them. */
function endsOf(socket: Socket): { peer: Endpoint; local: Endpoint } {
  return {
    peer: { address: socket.remoteAddress ?? "", port: socket.remotePort ?? 0 },
    local: { address: socket.localAddress ?? "", port: socket.localPort ?? 0 },
  };
}

/**
 * Whose connection is judged: a real TCP connection with either end on loopback. A packet to 127/8 or ::1 can
 * only come from this host, whatever its source: a local user connecting from the host's LAN or docker0 address
 * to a server on 127.0.0.1 is still a local user (stop 31's review: it was served as root). So is a caller on
 * this host to a server bound beyond loopback, from whatever address (callerHere; stop 32's review: with
 * ALLOW_UNAUTHENTICATED=1 on a shared host, nobody from 10.9.9.9 to 10.9.9.9 was served as root). "gone": the
 * peer reset the connection before we looked (no address left): refused, as a caller we cannot name. "skip": a
 * request injected in a test (not a socket: no other user can make one), or a caller from another host, which
 * only a server bound beyond loopback takes, and that one requires the token (ADR 0025).
 */
function judged(socket: Socket): "judge" | "gone" | "skip" {
  if (!(socket instanceof Socket)) return "skip";
  const remote = socket.remoteAddress;
  if (!remote || !socket.remotePort) return "gone";
  if (isLoopback(remote) || isLoopback(socket.localAddress ?? "")) return "judge";
  return callerHere(socket) ? "judge" : "skip";
}

/**
 * Off Linux there are no tables to read: the rule is skipped. On Linux a lookup that could not be made (out of
 * descriptors) refuses: it must never let an unknown caller in.
 */
const FAIL_OPEN = process.platform !== "linux";

const lookups = new WeakMap<Socket, Promise<number[] | undefined>>();

/**
 * The uids owning the other end of a loopback TCP connection, looked up once per connection (the trust check
 * and the gateway's share ask the same question); [] for a connection already gone (nothing to read for it).
 */
function uidsOf(socket: Socket): Promise<number[] | undefined> {
  let uids = lookups.get(socket);
  if (uids) return uids;
  const { peer, local } = endsOf(socket);
  uids = socket.destroyed ? Promise.resolve([]) : peerUids(peer, local);
  lookups.set(socket, uids);
  return uids;
}

/**
 * The uid on the other end of a loopback TCP connection: undefined when it is not loopback, not TCP, or the
 * tables cannot be read; -1 when no row matches (the peer is already gone).
 */
export async function peerUid(socket: Socket): Promise<number | undefined> {
  const which = judged(socket);
  if (which === "gone") return -1;
  if (which === "skip") return undefined;
  const uids = await uidsOf(socket);
  if (uids === undefined) return undefined;
  // Normally one row (the client's socket).
  return uids.length === 0 ? -1 : uids[0];
}

/**
 * For a connection with an end on loopback: "ok" (an allowed uid; off Linux, no tables to read: "unknown"), or
 * the refused uid (-1: none could be named, the lookup failed or the peer is gone). Beyond loopback: "ok" (a bind
 * beyond loopback requires the token already).
 */
export async function judgePeer(socket: Socket, trust: UidTrust): Promise<number | "ok" | "unknown"> {
  if (trust.allowed === "*") return "ok";
  const which = judged(socket);
  if (which === "gone") return -1;
  if (which === "skip") return "ok";
  const uids = await uidsOf(socket);
  if (uids === undefined) return FAIL_OPEN ? "unknown" : -1;
  const allowed = trust.allowed;
  // No row: the connection is already gone, or not what it claims: refuse, naming no uid.
  if (uids.length === 0) return -1;
  return uids.find((u) => !allowed.has(u)) ?? "ok";
}

/**
 * The peer's verdict and uid together, for the cap's judgement under pressure (uid-cap.ts): `allowed` as
 * judgePeer decides it; `uid` the socket's owner when the tables name one (undefined off loopback or off Linux).
 * Both read the same lookup (one per connection, sharing the batch's one read of the tables).
 */
export async function judgeConnection(
  socket: Socket,
  trust: UidTrust,
): Promise<{ allowed: boolean; uid: number | undefined }> {
  const verdict = await judgePeer(socket, trust);
  if (typeof verdict === "number") return { allowed: false, uid: verdict };
  const uid = verdict === "unknown" ? undefined : await peerUid(socket);
  return { allowed: true, uid: uid !== undefined && uid >= 0 ? uid : undefined };
}
