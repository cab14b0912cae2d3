import { describe, expect, it } from "vitest";
import {
  decodeMessage,
  encodeCall,
  MAX_MESSAGE_BYTES,
  messageLength,
  splitSignature,
  WireError,
} from "../../src/dbus/wire.ts";

/** A little-endian body writer for the tests' replies (the module itself writes calls only). */
class Body {
  b: number[] = [];
  pad(n: number) {
    while (this.b.length % n) this.b.push(0);
    return this;
  }
  u32(v: number) {
    this.pad(4);
    this.b.push(v & 255, (v >>> 8) & 255, (v >>> 16) & 255, v >>> 24);
    return this;
  }
  u64(v: bigint) {
    this.pad(8);
    for (let i = 0n; i < 8n; i++) this.b.push(Number((v >> (8n * i)) & 255n));
    return this;
  }
  str(s: string) {
    const x = Buffer.from(s);
    this.u32(x.length);
    this.b.push(...x, 0);
    return this;
  }
  sig(s: string) {
    this.b.push(s.length, ...Buffer.from(s), 0);
    return this;
  }
}

/** A METHOD_RETURN (type 2) answering `replySerial`, with this body. */
function reply(replySerial: number, signature: string, body: number[], type = 2): Buffer {
  const h = new Body();
  h.b.push(0x6c, type, 0, 1);
  h.u32(body.length).u32(7).u32(0);
  h.pad(8);
  h.b.push(5);
  h.sig("u").u32(replySerial);
  h.pad(8);
  h.b.push(8);
  h.sig("g").sig(signature);
  const fields = h.b.length - 16;
  h.b.splice(12, 4, fields & 255, (fields >>> 8) & 255, 0, 0);
  h.pad(8);
  return Buffer.from([...h.b, ...body]);
}

describe("the D-Bus wire format", () => {
  it("a call reads back as what was sent: path, serial, signature and its string and string-array arguments", () => {
    const msg = encodeCall(
      {
        path: "/org/freedesktop/systemd1",
        interface: "org.freedesktop.systemd1.Manager",
        member: "ListUnitsFiltered",
        args: [{ as: ["failed", "ünïcode"] }, { s: "" }, { o: "/x" }],
      },
      42,
    );
    expect(messageLength(msg)).toBe(msg.length);
    const back = decodeMessage(msg);
    expect(back).toMatchObject({ type: 1, serial: 42, signature: "asso" });
    expect(back.body).toEqual([["failed", "ünïcode"], "", "/x"]);
  });

  it("reads a GetAll-shaped reply: a{sv} of strings, 64-bit timestamps, booleans, arrays and structs", () => {
    const b = new Body();
    b.u32(0).pad(8);
    // The array's length counts from its first element, not the padding before it.
    const at = b.b.length;
    b.str("Id").sig("s").str("rn.service");
    b.pad(8).str("ActiveEnterTimestamp").sig("t").u64(1_795_340_029_123_456n);
    b.pad(8).str("CanStart").sig("b").u32(1);
    b.pad(8).str("Names").sig("as").u32(8).str("a.x");
    b.pad(8).str("LoadError").sig("(ss)").pad(8).str("e").str("m");
    b.b.splice(0, 4, ...Buffer.from(Uint32Array.of(b.b.length - at).buffer));
    const msg = reply(3, "a{sv}", b.b);
    const back = decodeMessage(msg);
    expect(back).toMatchObject({ type: 2, replySerial: 3, signature: "a{sv}" });
    expect(back.body[0]).toEqual({
      Id: "rn.service",
      ActiveEnterTimestamp: 1_795_340_029_123_456,
      CanStart: true,
      Names: ["a.x"],
      LoadError: ["e", "m"],
    });
  });

  it("a key named __proto__ is a plain key, not the object's prototype", () => {
    const b = new Body().u32(0);
    b.pad(8).str("__proto__").sig("s").str("x");
    b.b.splice(0, 4, ...Buffer.from(Uint32Array.of(b.b.length - 8).buffer));
    const body = decodeMessage(reply(1, "a{sv}", b.b)).body[0] as Record<string, unknown>;
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype);
    expect(Object.hasOwn(body, "__proto__")).toBe(true);
  });

  it("an error reply carries its name", () => {
    const withName = reply(1, "s", new Body().str("no such property").b, 3);
    // An ERROR_NAME field (4) added after the others.
    const b = new Body();
    b.b.push(...withName.subarray(0, 16));
    const fieldsEnd = 16 + withName.readUInt32LE(12);
    b.b.push(...withName.subarray(16, fieldsEnd));
    b.pad(8);
    b.b.push(4);
    b.sig("s").str("org.freedesktop.DBus.Error.UnknownProperty");
    const fields = b.b.length - 16;
    b.b.splice(12, 4, ...Buffer.from(Uint32Array.of(fields).buffer));
    b.pad(8);
    b.b.push(...new Body().str("no such property").b);
    const msg = decodeMessage(Buffer.from(b.b));
    expect(msg).toMatchObject({ type: 3, errorName: "org.freedesktop.DBus.Error.UnknownProperty" });
    expect(msg.body).toEqual(["no such property"]);
  });

  it("refuses what it cannot trust, with a WireError and nothing read past the bytes there are", () => {
    const ok = reply(1, "s", new Body().str("hello").b);
    // Cut short anywhere: an error, never a value made of bytes that are not there.
    for (let n = 16; n < ok.length; n++)
      expect(() => decodeMessage(ok.subarray(0, n)), `${n} bytes`).toThrow(WireError);
    // Big-endian, too big, a bad signature, an empty struct, an array overrunning its element.
    const be = Buffer.from(ok);
    be[0] = 0x42;
    expect(() => messageLength(be)).toThrow(WireError);
    const huge = Buffer.from(ok);
    huge.writeUInt32LE(MAX_MESSAGE_BYTES, 4);
    expect(() => messageLength(huge)).toThrow(/at most/);
    expect(() => splitSignature("a{s")).toThrow(WireError);
    expect(() => splitSignature("z")).toThrow(WireError);
    expect(() => splitSignature(`${"a".repeat(40)}s`)).toThrow(/too deep/);
    expect(() => decodeMessage(reply(1, "()", []))).toThrow(WireError);
    const overrun = new Body().u32(3).u32(0);
    expect(() => decodeMessage(reply(1, "au", overrun.b))).toThrow(WireError);
    const variant = new Body().sig("ss").str("a").str("b");
    expect(() => decodeMessage(reply(1, "v", variant.b))).toThrow(/variant/);
  });

  it("a string with a NUL in it is not sent", () => {
    expect(() => encodeCall({ path: "/", interface: "a.b", member: "Get", args: [{ s: "a\0b" }] }, 1)).toThrow(
      WireError,
    );
  });
});
