/**
 * Who is calling over loopback: the uid that owns the peer's end of a loopback TCP connection, read from the
 * kernel's socket tables (/proc/net/tcp and tcp6, where the client's socket is the row whose local end is our
 * peer and whose remote end is us). The trust model (docs/security.md, ADR 0025): on loopback, a caller must be
 * this process's own user, root, the user who ran sudo (SUDO_UID), or a uid ALLOWED_UIDS names; anyone else
 * needs the bearer token. Where the tables cannot be read (not Linux), the check is skipped, once logged.
 */
import { readFile } from "node:fs/promises";
import { isIP, type Socket } from "node:net";

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
function bytesOfIp(ip: string): number[] | undefined {
  if (isIP(ip) === 4) return ip.split(".").map(Number);
  if (isIP(ip) !== 6) return undefined;
  const canonical = new URL(`http://[${ip.replace(/%.*$/, "")}]/`).hostname.slice(1, -1);
  const [head = "", tail] = canonical.split("::");
  const part = (s: string) => (s ? s.split(":").map((g) => Number.parseInt(g, 16)) : []);
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  const groups = [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
  return groups.flatMap((g) => [g >> 8, g & 255]);
}

const same = (a: number[] | undefined, b: number[]) =>
  a !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);

/** A row of the socket tables: its local and remote address (hex, as the tables spell them) and its owner. */
interface Row {
  local: string;
  remote: string;
  uid: number;
}

/** The tables, rows keyed by `localPort:remotePort`; undefined when neither can be read (not Linux). */
type Tables = Map<string, Row[]> | undefined;

async function readTables(): Promise<Tables> {
  const rows = new Map<string, Row[]>();
  let readable = false;
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = await readFile(file, "utf8");
      readable = true;
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      const [la = "", lp = ""] = (f[1] ?? "").split(":");
      const [ra = "", rp = ""] = (f[2] ?? "").split(":");
      const key = `${Number.parseInt(lp, 16)}:${Number.parseInt(rp, 16)}`;
      const row = { local: la, remote: ra, uid: Number(f[7]) };
      const list = rows.get(key);
      if (list) list.push(row);
      else rows.set(key, [row]);
    }
  }
  return readable ? rows : undefined;
}

/** A read of the tables not started yet, which lookups join; and the one under way (or done). */
let queued: Promise<Tables> | undefined;
let running: Promise<unknown> = Promise.resolve();

/**
 * The tables as they are after this call: every lookup waiting at once shares one read. Reading both tables
 * costs ~10–20 ms of a libuv thread whatever the namespace holds (the kernel walks its whole hash table), so a
 * read per connection let one client that opens and abandons connections fast queue up seconds of reads in
 * front of everyone else's (issue 18: another uid's call took 4–21 s). A lookup joins the next read, never
 * one already under way (which may predate its connection): at most one read runs and one waits.
 */
function freshTables(): Promise<Tables> {
  if (queued) return queued;
  const next: Promise<Tables> = running.then(() => {
    if (queued === next) queued = undefined;
    return readTables();
  });
  queued = next;
  running = next.catch(() => undefined);
  return next;
}

/** The uids owning a socket from `peer` to `local` (normally one); undefined when the tables cannot be read. */
export async function peerUids(
  peer: { address: string; port: number },
  local: { address: string; port: number },
): Promise<number[] | undefined> {
  const want = { peer: bytesOfIp(peer.address), local: bytesOfIp(local.address) };
  const tables = await freshTables();
  if (tables === undefined) return undefined;
  const rows = tables.get(`${peer.port}:${local.port}`) ?? [];
  return rows.filter((r) => same(want.peer, bytesOf(r.local)) && same(want.local, bytesOf(r.remote))).map((r) => r.uid);
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

const lookups = new WeakMap<Socket, Promise<number[] | undefined>>();

/**
 * The uids owning the other end of a loopback TCP connection, looked up once per connection (the trust check
 * and the gateway's share ask the same question); [] for a connection already gone (nothing to read for it).
 */
function uidsOf(socket: Socket): Promise<number[] | undefined> {
  let uids = lookups.get(socket);
  if (uids) return uids;
  const peer = { address: socket.remoteAddress ?? "", port: socket.remotePort ?? 0 };
  const local = { address: socket.localAddress ?? "", port: socket.localPort ?? 0 };
  uids = socket.destroyed ? Promise.resolve([]) : peerUids(peer, local);
  lookups.set(socket, uids);
  return uids;
}

/**
 * The uid on the other end of a loopback TCP connection: undefined when it is not loopback, not TCP, or the
 * tables cannot be read; -1 when no row matches (the peer is already gone).
 */
export async function peerUid(socket: Socket): Promise<number | undefined> {
  // No port: not a TCP connection (an injected request in a test, which no other user can make).
  if (!isLoopback(socket.remoteAddress ?? "") || !socket.remotePort) return undefined;
  const uids = await uidsOf(socket);
  if (uids === undefined) return undefined;
  // Normally one row (the client's socket).
  return uids.length === 0 ? -1 : uids[0];
}

/**
 * For a loopback connection: "ok" (an allowed uid, or no tables to read: "unknown"), or the refused uid. Not
 * loopback: "ok" (a bind beyond loopback requires the token already).
 */
export async function judgePeer(socket: Socket, trust: UidTrust): Promise<number | "ok" | "unknown"> {
  // No port: not a TCP connection (an injected request in a test, which no other user can make).
  if (!isLoopback(socket.remoteAddress ?? "") || !socket.remotePort || trust.allowed === "*") return "ok";
  const uids = await uidsOf(socket);
  if (uids === undefined) return "unknown";
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
