/**
 * askSystemd against peers on a real unix socket the test serves: what a refusing, silent, hostile or answering
 * systemd gets back. (A real systemd answers in servers/service/test/tools/bus.test.ts.)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  askSystemd,
  BusUnavailable,
  getProperty,
  privateSocketOf,
  unitObjectPath,
} from "../../src/dbus/systemd-bus.ts";
import { decodeMessage, encodeCall, messageLength } from "../../src/dbus/wire.ts";
import { DiagError } from "../../src/errors/errors.ts";

const dir = mkdtempSync(join(tmpdir(), "rn-dbus-"));
let n = 0;
const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A peer on a fresh socket path: `onLine` sees each authentication line, `onCall` each call after BEGIN. */
async function peer(handle: {
  onLine?(line: string, sock: Socket): void;
  onCall?(call: ReturnType<typeof decodeMessage>, sock: Socket): void;
}): Promise<{ path: string; connections: () => number }> {
  const path = join(dir, `bus-${++n}`);
  let connections = 0;
  const server = createServer((sock) => {
    connections += 1;
    let buf = Buffer.alloc(0);
    let begun = false;
    sock.on("error", () => {});
    sock.on("data", (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      while (!begun) {
        const eol = buf.indexOf("\r\n");
        if (eol < 0) return;
        const line = buf.toString("latin1", 0, eol).replace(/^\0/, "");
        buf = buf.subarray(eol + 2);
        if (line === "BEGIN") begun = true;
        else if (handle.onLine) handle.onLine(line, sock);
        else sock.write("OK 0123456789abcdef0123456789abcdef\r\n");
      }
      for (;;) {
        const len = messageLength(buf);
        if (len === undefined || buf.length < len) return;
        handle.onCall?.(decodeMessage(buf.subarray(0, len)), sock);
        buf = buf.subarray(len);
      }
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(path, r));
  return { path, connections: () => connections };
}

/**
 * A reply (type 2) or an error (type 3, UnknownProperty) to `serial` carrying one string: the body taken from a
 * call's encoding, the header with its REPLY_SERIAL and SIGNATURE fields written here.
 */
function answer(serial: number, text: string, type = 2, serialType: "u" | "d" = "u"): Buffer {
  const call = encodeCall({ path: "/", interface: "x.y", member: "z", args: [{ s: text }] }, 1);
  const bodyLength = call.readUInt32LE(4);
  const body = call.subarray(call.length - bodyLength);
  const fields: number[] = [];
  const push = (...b: number[]) => fields.push(...b);
  const pad = () => {
    while ((16 + fields.length) % 8) fields.push(0);
  };
  if (serialType === "u") {
    push(5, 1, 0x75, 0, 0, 0, 0, 0); // REPLY_SERIAL, signature "u", padding to 4
    fields.splice(4, 4, serial & 255, (serial >>> 8) & 255, 0, 0);
  } else {
    // The same field as a double (signature "d", aligned to 8): what a hostile peer might send.
    const d = Buffer.alloc(8);
    d.writeDoubleLE(serial);
    push(5, 1, 0x64, 0, 0, 0, 0, 0, ...d);
  }
  pad();
  push(8, 1, 0x67, 0, 1, 0x73, 0); // SIGNATURE "s"
  if (type === 3) {
    pad();
    const name = Buffer.from("org.freedesktop.DBus.Error.UnknownProperty");
    push(4, 1, 0x73, 0, name.length, 0, 0, 0, ...name, 0);
  }
  const fieldsLength = fields.length;
  pad();
  const head = Buffer.alloc(16);
  head.writeUInt8(0x6c, 0);
  head.writeUInt8(type, 1);
  head.writeUInt8(1, 3);
  head.writeUInt32LE(body.length, 4);
  head.writeUInt32LE(99, 8);
  head.writeUInt32LE(fieldsLength, 12);
  return Buffer.concat([head, Buffer.from(fields), body]);
}

const call = getProperty("/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "Version");

describe("askSystemd", () => {
  it("answers each call by its serial, errors as errors, one connection for all of them", async () => {
    const p = await peer({
      onCall: (m, sock) => {
        const [iface, prop] = m.body as string[];
        // Answered out of order: the second call first.
        if (m.serial === 2) sock.write(answer(2, "second", 3));
        else setTimeout(() => sock.write(answer(m.serial, `${iface}/${prop}`)), 5);
      },
    });
    const replies = await askSystemd(p.path, [call, getProperty("/", "a.b", "C")], 5_000);
    expect(replies).toEqual([
      { ok: true, body: ["org.freedesktop.systemd1.Manager/Version"] },
      { ok: false, error: "org.freedesktop.DBus.Error.UnknownProperty", message: "second" },
    ]);
    expect(p.connections()).toBe(1);
  });

  it("a missing socket, a refusal at authentication or a close before it: BusUnavailable (ask the command)", async () => {
    // No socket, or nobody listening (systemd between the halves of a daemon-reexec): absent, not refused.
    await expect(askSystemd(join(dir, "none"), [call], 5_000)).rejects.toMatchObject({ refused: false });
    const rejected = await peer({ onLine: (_l, sock) => sock.write("REJECTED EXTERNAL\r\n") });
    await expect(askSystemd(rejected.path, [call], 5_000)).rejects.toMatchObject({ refused: true });
    // systemd's own refusal of a peer it cannot see (another PID namespace): it closes the connection.
    const closed = await peer({ onLine: (_l, sock) => sock.destroy() });
    const err = await askSystemd(closed.path, [call], 5_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BusUnavailable);
    expect(err).toMatchObject({ refused: true });
  });

  it("only a return or an error with an integer reply serial answers a call: signals and odd serials are read past", async () => {
    const p = await peer({
      onCall: (m, sock) => {
        // A signal (type 4) and a return whose REPLY_SERIAL is a double, both naming the call, then the answer.
        sock.write(answer(m.serial, "a signal", 4));
        sock.write(answer(m.serial, "a double serial", 2, "d"));
        sock.write(answer(m.serial, "the answer"));
      },
    });
    expect(await askSystemd(p.path, [call], 5_000)).toEqual([{ ok: true, body: ["the answer"] }]);
    // A peer that only ever sends those: E_TIMEOUT, never an answer made of them.
    const odd = await peer({
      onCall: (m, sock) => {
        sock.write(answer(m.serial, "a signal", 4));
        sock.write(answer(m.serial, "a double serial", 2, "d"));
      },
    });
    await expect(askSystemd(odd.path, [call], 300)).rejects.toMatchObject({ code: "E_TIMEOUT" });
  });

  it("a reply of megabytes (thousands of failed units), in many chunks, is read whole", async () => {
    const big = "x".repeat(3 * 1024 * 1024);
    const p = await peer({
      onCall: (m, sock) => {
        const a = answer(m.serial, big);
        // Written in 4 KiB pieces, as a busy socket might deliver it.
        for (let at = 0; at < a.length; at += 4096) sock.write(a.subarray(at, at + 4096));
      },
    });
    const [reply] = await askSystemd(p.path, [call], 10_000);
    expect(reply).toMatchObject({ ok: true });
    expect((reply as { body: string[] }).body[0]?.length).toBe(big.length);
  });

  it("a peer that never answers: E_TIMEOUT at the deadline", async () => {
    const silent = await peer({ onCall: () => {} });
    await expect(askSystemd(silent.path, [call], 200)).rejects.toMatchObject({ code: "E_TIMEOUT" });
  });

  it("what cannot be read, or a message too big: E_EXEC_FAILED, not a guess", async () => {
    const garbage = await peer({ onCall: (_m, sock) => sock.write(Buffer.alloc(32, 0x42)) });
    await expect(askSystemd(garbage.path, [call], 5_000)).rejects.toMatchObject({ code: "E_EXEC_FAILED" });
    const huge = await peer({
      onCall: (m, sock) => {
        const a = answer(m.serial, "x");
        a.writeUInt32LE(65 << 20, 4);
        sock.write(a);
      },
    });
    await expect(askSystemd(huge.path, [call], 5_000)).rejects.toMatchObject({
      code: "E_EXEC_FAILED",
      message: expect.stringMatching(/at most/),
    });
    const hangsUp = await peer({ onCall: (_m, sock) => sock.destroy() });
    await expect(askSystemd(hangsUp.path, [call], 5_000)).rejects.toMatchObject({ code: "E_EXEC_FAILED" });
  });

  it("sends only read-only members: anything else is refused before a connection is made", async () => {
    const p = await peer({});
    for (const member of ["StartUnit", "Set", "KillUnit"]) {
      const bad = { path: "/org/freedesktop/systemd1", interface: "org.freedesktop.systemd1.Manager", member };
      await expect(askSystemd(p.path, [call, bad], 5_000)).rejects.toBeInstanceOf(DiagError);
    }
    const set = { ...call, member: "Set" };
    await expect(askSystemd(p.path, [set], 5_000)).rejects.toMatchObject({ code: "E_INTERNAL" });
    expect(p.connections()).toBe(0);
  });
});

describe("names and paths", () => {
  it("a unit's object path is systemd's bus label escape", () => {
    expect(unitObjectPath("ssh.service")).toBe("/org/freedesktop/systemd1/unit/ssh_2eservice");
    expect(unitObjectPath("rn-broken.service")).toBe("/org/freedesktop/systemd1/unit/rn_2dbroken_2eservice");
    expect(unitObjectPath("1x@a:b\\c.mount")).toBe("/org/freedesktop/systemd1/unit/_31x_40a_3ab_5cc_2emount");
    expect(unitObjectPath("")).toBe("/org/freedesktop/systemd1/unit/_");
  });
  it("the private socket sits beside the directory sd_booted looks at", () => {
    expect(privateSocketOf("/run/systemd/system")).toBe("/run/systemd/private");
    expect(privateSocketOf("/proc/7/root/run/systemd/system/")).toBe("/proc/7/root/run/systemd/private");
  });
});
