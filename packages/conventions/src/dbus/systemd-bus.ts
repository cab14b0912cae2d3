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
  MESSAGE_TYPE,
  type Message,
  type MethodCall,
  messageLength,
  WireError,
} from "./wire.ts";

/** The only members ever sent: property reads and the unit list. */
export const READ_ONLY_MEMBERS = new Set([
  "org.freedesktop.DBus.Properties.Get",
  "org.freedesktop.DBus.Properties.GetAll",
  "org.freedesktop.systemd1.Manager.ListUnitsFiltered",
]);

/** What one call answered: its body, or the D-Bus error's name and message. */
export type BusReply = { ok: true; body: unknown[] } | { ok: false; error: string; message: string };

/** The socket could not be used at all (missing, refused, not ours to use): ask the command instead. */
export class BusUnavailable extends Error {}

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
    let pending: Buffer = Buffer.alloc(0);
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
    sock.on("connect", () => sock.write(auth));
    sock.on("error", (err: NodeJS.ErrnoException) =>
      finish(authed ? new DiagError("E_EXEC_FAILED", `systemd's bus: ${err.message}`) : new BusUnavailable(err.code)),
    );
    sock.on("close", () => {
      if (authed) finish(new DiagError("E_EXEC_FAILED", "systemd closed its bus before answering"));
      else finish(new BusUnavailable("closed during authentication"));
    });
    sock.on("data", (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      try {
        if (!authed) {
          const eol = pending.indexOf("\r\n");
          if (eol < 0) {
            if (pending.length > 512) finish(new BusUnavailable("an authentication line too long"));
            return;
          }
          const line = pending.toString("latin1", 0, eol);
          if (!line.startsWith("OK ")) return finish(new BusUnavailable(`authentication: ${line.slice(0, 80)}`));
          authed = true;
          pending = pending.subarray(eol + 2);
          // After the OK, not with the BEGIN: sd-bus reads what came in one packet with the BEGIN only when more
          // arrives (systemd 252 left a pipelined call unanswered).
          sock.write(messages);
        }
        for (;;) {
          const length = messageLength(pending);
          if (length === undefined || pending.length < length) return;
          const msg = decodeMessage(pending.subarray(0, length));
          pending = pending.subarray(length);
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
