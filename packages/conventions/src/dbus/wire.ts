/**
 * The D-Bus wire format (the specification's "Message Protocol"), little-endian, just enough to send a method
 * call and read any reply: a call's arguments are strings and arrays of strings; a reply's body is read by its
 * signature, whatever it holds. Bounded: a signature nests 32 deep at most (the specification's own limit), a
 * message is MAX_MESSAGE_BYTES at most, and every read is checked against the bytes there are.
 */

/** Message types (header byte 1). */
export const MESSAGE_TYPE = { methodCall: 1, methodReturn: 2, error: 3, signal: 4 } as const;
/** Header field codes. */
const FIELD = { path: 1, interface: 2, member: 3, errorName: 4, replySerial: 5, destination: 6, signature: 8 };
/** Fixed part of a header: endianness, type, flags, version, body length, serial, fields' array length. */
export const FIXED_HEADER_BYTES = 16;
/**
 * A reply bigger than this is refused (the specification allows 128 MiB). A unit's properties are a few KiB, but
 * the manager's list of failed units is ~300 bytes a unit: a brute-force run leaves thousands of failed
 * per-connection `sshd@…` instances (stop 39's review: 4,103 of them made 1.2 MB).
 */
export const MAX_MESSAGE_BYTES = 64 << 20;
const MAX_DEPTH = 32;

export class WireError extends Error {}

/** What a method call carries: strings (`s`), object paths (`o`) and arrays of strings (`as`) only. */
export type CallArg = { s: string } | { o: string } | { as: readonly string[] };

export interface MethodCall {
  path: string;
  interface: string;
  member: string;
  destination?: string;
  args?: readonly CallArg[];
}

class Writer {
  bytes: number[] = [];
  align(n: number): void {
    while (this.bytes.length % n !== 0) this.bytes.push(0);
  }
  byte(v: number): void {
    this.bytes.push(v & 0xff);
  }
  u32(v: number): void {
    this.align(4);
    this.bytes.push(v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff);
  }
  /** Patch a u32 written earlier. */
  setU32(at: number, v: number): void {
    this.bytes.splice(at, 4, v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff);
  }
  string(v: string): void {
    const b = Buffer.from(v, "utf8");
    if (b.includes(0)) throw new WireError("a D-Bus string holds no NUL");
    this.u32(b.length);
    for (const x of b) this.bytes.push(x);
    this.bytes.push(0);
  }
  signature(v: string): void {
    this.byte(v.length);
    for (let i = 0; i < v.length; i++) this.bytes.push(v.charCodeAt(i));
    this.bytes.push(0);
  }
}

function argSignature(arg: CallArg): string {
  return "s" in arg ? "s" : "o" in arg ? "o" : "as";
}

/** A method call, serial `serial`, as bytes (flags 0: a reply is expected, no interactive authorization). */
export function encodeCall(call: MethodCall, serial: number): Buffer {
  const args = call.args ?? [];
  const body = new Writer();
  for (const arg of args) {
    if ("s" in arg) body.string(arg.s);
    else if ("o" in arg) body.string(arg.o);
    else {
      body.u32(0);
      const at = body.bytes.length - 4;
      for (const s of arg.as) body.string(s);
      body.setU32(at, body.bytes.length - at - 4);
    }
  }
  const signature = args.map(argSignature).join("");
  const h = new Writer();
  h.byte(0x6c); // 'l': little-endian
  h.byte(MESSAGE_TYPE.methodCall);
  h.byte(0);
  h.byte(1);
  h.u32(body.bytes.length);
  h.u32(serial);
  h.u32(0);
  const fieldsAt = 12;
  const field = (code: number, sig: "o" | "s" | "g", value: string) => {
    h.align(8);
    h.byte(code);
    h.signature(sig);
    if (sig === "g") h.signature(value);
    else h.string(value);
  };
  field(FIELD.path, "o", call.path);
  field(FIELD.interface, "s", call.interface);
  field(FIELD.member, "s", call.member);
  if (call.destination) field(FIELD.destination, "s", call.destination);
  if (signature) field(FIELD.signature, "g", signature);
  h.setU32(fieldsAt, h.bytes.length - FIXED_HEADER_BYTES);
  h.align(8);
  return Buffer.from([...h.bytes, ...body.bytes]);
}

export interface Message {
  type: number;
  serial: number;
  replySerial?: number;
  errorName?: string;
  signature: string;
  /** The body's values, read by the signature. */
  body: unknown[];
}

/** Bytes the whole message starting at `buf[0]` takes, or undefined while its fixed header is not all there. */
export function messageLength(buf: Buffer): number | undefined {
  if (buf.length < FIXED_HEADER_BYTES) return undefined;
  if (buf[0] !== 0x6c) throw new WireError("a big-endian message: not sent by the peers asked here");
  const bodyLength = buf.readUInt32LE(4);
  const fieldsLength = buf.readUInt32LE(12);
  const total = FIXED_HEADER_BYTES + align8(fieldsLength) + bodyLength;
  if (total > MAX_MESSAGE_BYTES) throw new WireError(`a message of ${total} bytes (at most ${MAX_MESSAGE_BYTES})`);
  return total;
}

/** Rounded up to a multiple of 8 (not with `&`: 32-bit, a length past 2^31 would turn negative). */
const align8 = (n: number) => Math.ceil(n / 8) * 8;

/** Read one whole message (messageLength bytes of `buf`). */
export function decodeMessage(buf: Buffer): Message {
  const r = new Reader(buf);
  r.at = 4;
  const bodyLength = r.u32();
  const serial = r.u32();
  const msg: Message = { type: buf[1] ?? 0, serial, signature: "", body: [] };
  // The header's fields, a(yv), read here rather than by value(): a field counts only with the type the
  // specification gives it (a REPLY_SERIAL sent as a double by a hostile peer is no reply to anything).
  const fieldsEnd = r.u32() + 16;
  if (fieldsEnd > buf.length) throw new WireError("a header longer than its message");
  while (r.at < fieldsEnd) {
    r.align(8);
    const code = r.value("y", 0);
    const type = r.value("g", 0) as string;
    if (splitSignature(type).length !== 1) throw new WireError(`a header field of signature ${type}`);
    const value = r.value(type, 1);
    if (code === FIELD.replySerial && type === "u") msg.replySerial = value as number;
    else if (code === FIELD.errorName && type === "s") msg.errorName = value as string;
    else if (code === FIELD.signature && type === "g") msg.signature = value as string;
  }
  if (r.at !== fieldsEnd) throw new WireError("header fields overrunning their length");
  r.align(8);
  const end = r.at + bodyLength;
  if (end > buf.length) throw new WireError("a message shorter than its header says");
  r.end = end;
  for (const type of splitSignature(msg.signature)) msg.body.push(r.value(type, 0));
  return msg;
}

/** A signature's complete types, in order ("sa{sv}u" → s, a{sv}, u). */
export function splitSignature(sig: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < sig.length; ) {
    const end = completeTypeEnd(sig, i, 0);
    out.push(sig.slice(i, end));
    i = end;
  }
  return out;
}

function completeTypeEnd(sig: string, i: number, depth: number): number {
  if (depth > MAX_DEPTH) throw new WireError("a signature nested too deep");
  const c = sig[i];
  if (c === undefined) throw new WireError(`a signature cut short: ${sig}`);
  if (c === "a") return completeTypeEnd(sig, i + 1, depth + 1);
  if (c === "(" || c === "{") {
    const close = c === "(" ? ")" : "}";
    let j = i + 1;
    while (sig[j] !== close) {
      if (j >= sig.length) throw new WireError(`an unclosed ${c} in ${sig}`);
      j = completeTypeEnd(sig, j, depth + 1);
    }
    return j + 1;
  }
  if ("ybnqiuxtdhsogv".includes(c)) return i + 1;
  throw new WireError(`type ${JSON.stringify(c)} in a signature`);
}

const ALIGN: Record<string, number> = { y: 1, g: 1, v: 1, n: 2, q: 2, b: 4, i: 4, u: 4, h: 4, s: 4, o: 4, a: 4 };
const alignOf = (type: string) => ALIGN[type[0] ?? ""] ?? 8;

/**
 * Values by type: integers as numbers (64-bit ones through Number: systemd's timestamps are µs since the epoch,
 * ~2^51), booleans, strings, a struct as an array, an array of dict entries with string keys as an object, any
 * other array as an array, a variant as its value.
 */
class Reader {
  at = 0;
  end: number;
  readonly buf: Buffer;
  constructor(buf: Buffer) {
    this.buf = buf;
    this.end = buf.length;
  }
  align(n: number): void {
    this.at = (this.at + n - 1) & ~(n - 1);
  }
  need(n: number): void {
    if (this.at + n > this.end) throw new WireError("a message shorter than its contents");
  }
  u32(): number {
    this.align(4);
    this.need(4);
    const v = this.buf.readUInt32LE(this.at);
    this.at += 4;
    return v;
  }
  string(length: number): string {
    this.need(length + 1);
    const v = this.buf.toString("utf8", this.at, this.at + length);
    this.at += length + 1;
    return v;
  }
  value(type: string, depth: number): unknown {
    if (depth > MAX_DEPTH) throw new WireError("a value nested too deep");
    const c = type[0];
    this.align(alignOf(type));
    switch (c) {
      case "y":
        this.need(1);
        return this.buf[this.at++];
      case "b":
        return this.u32() !== 0;
      case "n":
      case "q": {
        this.need(2);
        const v = c === "n" ? this.buf.readInt16LE(this.at) : this.buf.readUInt16LE(this.at);
        this.at += 2;
        return v;
      }
      case "i": {
        this.need(4);
        const v = this.buf.readInt32LE(this.at);
        this.at += 4;
        return v;
      }
      case "u":
      case "h":
        return this.u32();
      case "x":
      case "t":
      case "d": {
        this.need(8);
        const v =
          c === "d"
            ? this.buf.readDoubleLE(this.at)
            : Number(c === "x" ? this.buf.readBigInt64LE(this.at) : this.buf.readBigUInt64LE(this.at));
        this.at += 8;
        return v;
      }
      case "s":
      case "o":
        return this.string(this.u32());
      case "g": {
        this.need(1);
        return this.string(this.buf[this.at++] as number);
      }
      case "v": {
        this.need(1);
        const sig = this.string(this.buf[this.at++] as number);
        const [inner, ...rest] = splitSignature(sig);
        if (inner === undefined || rest.length > 0) throw new WireError(`a variant of signature ${sig}`);
        return this.value(inner, depth + 1);
      }
      case "(": {
        if (type === "()") throw new WireError("an empty struct");
        const out: unknown[] = [];
        for (const t of splitSignature(type.slice(1, -1))) out.push(this.value(t, depth + 1));
        return out;
      }
      case "a": {
        const length = this.u32();
        const element = type.slice(1);
        this.align(alignOf(element));
        const end = this.at + length;
        if (end > this.end) throw new WireError("an array longer than its message");
        if (element[0] === "{") {
          const [k, v] = splitSignature(element.slice(1, -1)) as [string, string];
          const entries: Array<[unknown, unknown]> = [];
          while (this.at < end) {
            this.align(8);
            entries.push([this.value(k, depth + 1), this.value(v, depth + 1)]);
          }
          if (this.at !== end) throw new WireError("an array whose elements overrun its length");
          return k === "s" || k === "o" ? Object.fromEntries(entries) : entries;
        }
        const out: unknown[] = [];
        while (this.at < end) out.push(this.value(element, depth + 1));
        if (this.at !== end) throw new WireError("an array whose elements overrun its length");
        return out;
      }
      default:
        throw new WireError(`type ${JSON.stringify(type)} cannot be read`);
    }
  }
}
