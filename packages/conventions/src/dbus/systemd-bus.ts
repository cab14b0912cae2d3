/**
 * systemd's manager asked over its private D-Bus socket (/run/systemd/private, root only: what systemctl itself
 * uses when run as root), with no process spawned: a `systemctl show` costs ~12 ms of fork, exec and dynamic
 * linking for a question systemd answers in ~0.2 ms (issue 17: service_status 1.18× its command over HTTP).
 *
 * One connection per question: the authentication and the BEGIN, then at the OK every call at once, so a
 * question is two round trips on a local socket; nothing is kept between calls that a systemd restart or
 * daemon-reexec could leave stale. Read-only by construction: only the members in READ_ONLY_MEMBERS are ever
 * sent. Where the socket is missing or refuses us (not root, another init), `undefined` tells the caller to ask
 * the command instead.
 */
import { connect, type Socket } from "node:net";
import { DiagError } from "../errors/errors.ts";
import {
  decodeMessage,
  encodeCall,
  FIXED_HEADER_BYTES,
  MESSAGE_TYPE,
  type Message,
  type MethodCall,
  messageLength,
  WireError,
} from "./wire.ts";

/** The only members ever sent: property reads and the unit list. */
export const READ_ONLY_MEMBERS = new Set([
  "org.freedesktop.DBus.Properties.Get",
  "org.freedesktop.systemd1.Manager.ListUnitsFiltered",
]);

/** What one call answered: its body, or the D-Bus error's name and message. */
export type BusReply = { ok: true; body: unknown[] } | { ok: false; error: string; message: string };

/**
 * The socket could not be used at all: ask the command instead. `refused`: systemd (or the socket's mode) said
 * no: not ours to use, likely for as long as this process lives. `absent`: no socket, or nobody listening on it:
 * systemd not there, or between the two halves of a daemon-reexec (every systemd upgrade runs one).
 */
export class BusUnavailable extends Error {
  readonly refused: boolean;
  constructor(message: string | undefined, refused: boolean) {
    super(message);
    this.refused = refused;
  }
}

/** connect()'s errors that mean no socket or no listener, rather than a refusal. */
const ABSENT = new Set(["ENOENT", "ECONNREFUSED", "ENOTDIR"]);

/** The private socket beside the directory sd_booted(3) looks at (…/run/systemd/system → …/run/systemd/private). */
export function privateSocketOf(bootedDir: string): string {
  return bootedDir.replace(/\/system\/?$/, "/private");
}

/**
 * Send `calls` on one connection and read every reply, in order. Rejects with BusUnavailable when the socket
 * cannot be reached or the authentication fails, DiagError E_TIMEOUT at the deadline, E_EXEC_FAILED on a
 * message that cannot be read.
 */
export async function askSystemd(
  socketPath: string,
  calls: readonly MethodCall[],
  timeoutMs: number,
): Promise<BusReply[]> {
  for (const c of calls) {
    const member = `${c.interface}.${c.member}`;
    if (!READ_ONLY_MEMBERS.has(member)) throw new DiagError("E_INTERNAL", `${member} is not a read-only call`);
  }
  if (calls.length === 0) return [];
  const uid = process.getuid?.() ?? 0;
  const auth = Buffer.from(`\0AUTH EXTERNAL ${Buffer.from(String(uid)).toString("hex")}\r\nBEGIN\r\n`, "latin1");
  const messages = Buffer.concat(calls.map((c, i) => encodeCall(c, i + 1)));
  return new Promise<BusReply[]>((resolve, reject) => {
    const replies: Array<BusReply | undefined> = calls.map(() => undefined);
    let left = calls.length;
    let authed = false;
    // What came in and is not read yet, as the chunks it came in: joined only once a whole message is there (a
    // list of thousands of units comes in hundreds of chunks; joining at each would copy it hundreds of times).
    const chunks: Buffer[] = [];
    let have = 0;
    const peek = (n: number): Buffer | undefined => {
      if (have < n) return undefined;
      if ((chunks[0]?.length ?? 0) < n) chunks.splice(0, chunks.length, Buffer.concat(chunks, have));
      return chunks[0]?.subarray(0, n);
    };
    const drop = (n: number) => {
      const first = chunks[0] as Buffer;
      if (first.length === n) chunks.shift();
      else chunks[0] = first.subarray(n);
      have -= n;
    };
    let connected = false;
    let done = false;
    const sock: Socket = connect({ path: socketPath });
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      if (err) reject(err);
      else resolve(replies as BusReply[]);
    };
    const timer = setTimeout(
      () => finish(new DiagError("E_TIMEOUT", `systemd did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    sock.on("connect", () => {
      connected = true;
      sock.write(auth);
    });
    sock.on("error", (err: NodeJS.ErrnoException) =>
      finish(
        authed
          ? new DiagError("E_EXEC_FAILED", `systemd's bus: ${err.message}`)
          : new BusUnavailable(err.code, !(ABSENT.has(err.code ?? "") && !connected)),
      ),
    );
    sock.on("close", () => {
      if (authed) finish(new DiagError("E_EXEC_FAILED", "systemd closed its bus before answering"));
      // systemd's refusal of a peer whose pid it cannot see (another PID namespace) is a close.
      else finish(new BusUnavailable("closed during authentication", true));
    });
    sock.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      have += chunk.length;
      try {
        if (!authed) {
          const head = peek(have) as Buffer;
          const eol = head.indexOf("\r\n");
          if (eol < 0) {
            if (have > 512) finish(new BusUnavailable("an authentication line too long", true));
            return;
          }
          const line = head.toString("latin1", 0, eol);
          if (!line.startsWith("OK ")) return finish(new BusUnavailable(`authentication: ${line.slice(0, 80)}`, true));
          authed = true;
          drop(eol + 2);
          // After the OK, not with the BEGIN: sd-bus reads what came in one packet with the BEGIN only when more
          // arrives (systemd 252 left a pipelined call unanswered).
          sock.write(messages);
        }
        for (;;) {
          const header = peek(FIXED_HEADER_BYTES);
          const length = header && messageLength(header);
          const whole = length === undefined ? undefined : peek(length);
          if (!whole || length === undefined) return;
          const msg = decodeMessage(whole);
          drop(length);
          // Only a return or an error answers a call: signals (systemd sends every private connection its
          // units' changes) and anything else are read past.
          if (msg.type !== MESSAGE_TYPE.methodReturn && msg.type !== MESSAGE_TYPE.error) continue;
          const i = (msg.replySerial ?? 0) - 1;
          if (i < 0 || i >= calls.length || replies[i] !== undefined) continue;
          replies[i] = asReply(msg);
          if (--left === 0) return finish();
        }
      } catch (err) {
        const why = err instanceof WireError ? err.message : String(err);
        finish(new DiagError("E_EXEC_FAILED", `systemd's bus sent what cannot be read: ${why}`));
      }
    });
  });
}

function asReply(msg: Message): BusReply {
  if (msg.type === MESSAGE_TYPE.error)
    return { ok: false, error: msg.errorName ?? "unknown", message: String(msg.body[0] ?? "") };
  return { ok: true, body: msg.body };
}

/** systemd's object path of a unit: bus_label_escape (every byte but a letter, or a digit past the first, as _xx). */
export function unitObjectPath(name: string): string {
  let out = "";
  const b = Buffer.from(name, "utf8");
  for (let i = 0; i < b.length; i++) {
    const c = b[i] as number;
    const letter = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
    const digit = c >= 0x30 && c <= 0x39;
    out += letter || (digit && i > 0) ? String.fromCharCode(c) : `_${c.toString(16).padStart(2, "0")}`;
  }
  return `/org/freedesktop/systemd1/unit/${out || "_"}`;
}

export const MANAGER_PATH = "/org/freedesktop/systemd1";
export const PROPERTIES = "org.freedesktop.DBus.Properties";
export const UNIT_INTERFACE = "org.freedesktop.systemd1.Unit";

/** `Properties.Get` of one property (its reply body is one variant: the value). */
export const getProperty = (path: string, iface: string, property: string): MethodCall => ({
  path,
  interface: PROPERTIES,
  member: "Get",
  args: [{ s: iface }, { s: property }],
});
