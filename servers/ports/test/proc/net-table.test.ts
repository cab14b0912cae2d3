/**
 * /proc/net tables recorded on this machine (test/fixtures/proc-net-*.txt: a node process listening on
 * 127.0.0.1:8080, [::]:8443, [::1]:9090, [::ffff:127.0.0.2]:9091, udp 0.0.0.0:5353 and [::1]:5354, with one
 * established connection to 8080), parsed exactly; and the live tables against a listener this test opens.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatIpv6 } from "@roadnerd/conventions";
import { describe, expect, it } from "vitest";
import { decodeHexAddress, hostPortOf } from "../../src/proc/hex-address.ts";
import { parseNetTable, parseTcpConnections, readAllTables } from "../../src/proc/net-table.ts";

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), "utf8");

describe("parseNetTable", () => {
  it("keeps only LISTEN rows of tcp, with address, port, uid and inode", () => {
    expect(parseNetTable("tcp", fixture("proc-net-tcp.txt"))).toEqual([
      { proto: "tcp", address: "127.0.0.1", port: 8080, local: "127.0.0.1:8080", uid: 0, inode: 1602701 },
    ]);
  });

  it("decodes tcp6 rows: loopback, the wildcard and an IPv4-mapped address", () => {
    expect(parseNetTable("tcp6", fixture("proc-net-tcp6.txt"))).toEqual([
      { proto: "tcp6", address: "::1", port: 9090, local: "[::1]:9090", uid: 0, inode: 1602703 },
      { proto: "tcp6", address: "::", port: 8443, local: "[::]:8443", uid: 0, inode: 1602702 },
      {
        proto: "tcp6",
        address: "::ffff:127.0.0.2",
        port: 9091,
        local: "[::ffff:127.0.0.2]:9091",
        uid: 0,
        inode: 1602704,
      },
    ]);
  });

  it("keeps bound, unconnected UDP rows (state 07) of udp and udp6", () => {
    expect(parseNetTable("udp", fixture("proc-net-udp.txt"))).toEqual([
      { proto: "udp", address: "0.0.0.0", port: 5353, local: "0.0.0.0:5353", uid: 0, inode: 1602705 },
    ]);
    expect(parseNetTable("udp6", fixture("proc-net-udp6.txt"))).toEqual([
      { proto: "udp6", address: "::1", port: 5354, local: "[::1]:5354", uid: 0, inode: 1602706 },
    ]);
  });

  it("reads the local port and state of the connections (not the listeners) for who_uses_port", () => {
    expect(parseTcpConnections(fixture("proc-net-tcp.txt"))).toEqual([
      { port: 60814, state: "established" },
      { port: 8080, state: "established" },
    ]);
    expect(parseTcpConnections(fixture("proc-net-tcp6.txt"))).toEqual([]);
  });

  it("finds rows by position as a split into fields would: IPv4 and IPv6, every state, torn lines skipped", () => {
    // What the parsers did before they scanned by position (a split of every line), as the reference.
    const bySplit = (text: string) =>
      text
        .split("\n")
        .map((l) => l.trim().split(/\s+/))
        .filter((f) => f.length >= 10 && /^\d+:$/.test(f[0] ?? "") && f[3] !== "0A")
        .map((f) => Number.parseInt((f[1] ?? "").split(":")[1] ?? "", 16));
    const v4 = fixture("proc-net-tcp.txt").split("\n");
    const v6 = fixture("proc-net-tcp6.txt").split("\n");
    const row4 = v4[2] ?? "";
    const row6 = v6[1] ?? "";
    const rows = [v4[0] ?? ""];
    for (let i = 0; i < 300; i++) {
      const state = ["01", "06", "08", "0A", "0B"][i % 5] ?? "01";
      const port = (1000 + i).toString(16).toUpperCase().padStart(4, "0");
      const base = i % 2 ? row4 : row6;
      // sl renumbered (wider past 9999 in a real table), the local port and the state replaced in place.
      const m = /^(\s*)\d+: ([0-9A-F]+):[0-9A-F]{4} (\S+) [0-9A-F]{2} /.exec(base);
      expect(m).not.toBeNull();
      rows.push(
        base.replace(
          /^\s*\d+: ([0-9A-F]+):[0-9A-F]{4} (\S+) [0-9A-F]{2} /,
          `${String(i * 37).padStart(4)}: $1:${port} $2 ${state} `,
        ),
      );
    }
    // A torn last line (cut after its state), a line of garbage, an empty one.
    rows.push(`${(rows[1] ?? "").slice(0, 45)}`, "garbage: 0100007F:1F90 x", "");
    const text = rows.join("\n");
    expect(parseTcpConnections(text).map((c) => c.port)).toEqual(bySplit(text));
    expect(parseTcpConnections(text)).toHaveLength(240);
    // 60 listening rows, copies of two sockets: one entry per inode.
    expect(parseNetTable("tcp", text)).toHaveLength(2);
  });

  it("lists a socket once when a read that resumed repeats its row (same inode)", () => {
    // Seen in CI: sockets of other tests closing between two pieces of /proc/net/udp made a listener appear twice.
    const udp = fixture("proc-net-udp.txt");
    const row = udp.split("\n")[1] ?? "";
    expect(parseNetTable("udp", `${udp}${row}\n`)).toEqual([
      { proto: "udp", address: "0.0.0.0", port: 5353, local: "0.0.0.0:5353", uid: 0, inode: 1602705 },
    ]);
    // Inode 0 (no file holds the socket) says nothing about sameness: both rows stay.
    const orphan = "   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 0 1";
    expect(parseNetTable("tcp", `${orphan}\n${orphan}\n`)).toHaveLength(2);
  });

  it("skips the header, blank and torn lines", () => {
    expect(parseNetTable("tcp", "  sl  local_address\n\n   0: 0100007F:1F90 00000000:0000 0A 00000000\n")).toEqual([]);
    expect(parseNetTable("tcp", "   0: ZZZZ:1F90 00000000:0000 0A 0:0 0:0 0 0 0 7")).toEqual([]);
  });
});

describe("addresses as the kernel writes them", () => {
  it("decodes IPv4 and IPv6 words in host byte order", () => {
    expect(decodeHexAddress("0100007F")).toBe("127.0.0.1");
    expect(decodeHexAddress("00000000")).toBe("0.0.0.0");
    expect(decodeHexAddress("0202000A")).toBe("10.0.2.2");
    expect(decodeHexAddress("B80D0120000000000000000001000000")).toBe("2001:db8::1");
    expect(decodeHexAddress("000080FE00000000FF005E02300000FE")).toBe("fe80::25e:ff:fe00:30");
    expect(() => decodeHexAddress("7F01")).toThrow(/not a \/proc\/net address/);
  });

  it("writes IPv6 in the shortest form (RFC 5952) and brackets it with a port", () => {
    const b = (...groups: number[]) => groups.flatMap((g) => [g >> 8, g & 0xff]);
    expect(formatIpv6(b(0x2001, 0xdb8, 0, 0, 1, 0, 0, 1))).toBe("2001:db8::1:0:0:1");
    expect(formatIpv6(b(0x2001, 0xdb8, 1, 2, 3, 4, 5, 6))).toBe("2001:db8:1:2:3:4:5:6");
    expect(formatIpv6(b(0, 0, 0, 0, 0, 0, 0, 0))).toBe("::");
    expect(formatIpv6(b(0x2001, 0xdb8, 0, 1, 0, 0, 0, 0))).toBe("2001:db8:0:1::");
    expect(hostPortOf("::1", 53)).toBe("[::1]:53");
    expect(hostPortOf("192.0.2.1", 53)).toBe("192.0.2.1:53");
  });
});

describe("readAllTables (live)", () => {
  it("lists a TCP listener this test opens, with the inode its fd links to", async () => {
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    try {
      const port = (srv.address() as AddressInfo).port;
      const found = (await readAllTables()).listening.filter((s) => s.port === port);
      expect(found).toEqual([
        { proto: "tcp", address: "127.0.0.1", port, local: `127.0.0.1:${port}`, uid: 0, inode: expect.any(Number) },
      ]);
    } finally {
      srv.close();
    }
  });

  it("listeners only (read up to the first connection) finds every listener the whole read finds", async () => {
    // Listeners on both families, then connections (the caller's kind: what stops the read), then more listeners.
    const servers: Server[] = [];
    const sockets: Socket[] = [];
    const listen = async (host: string) => {
      const srv = createServer((s) => sockets.push(s));
      await new Promise<void>((r) => srv.listen(0, host, r));
      servers.push(srv);
      return (srv.address() as AddressInfo).port;
    };
    try {
      const first = [await listen("127.0.0.1"), await listen("::1")];
      for (const [host, port] of [
        ["127.0.0.1", first[0]],
        ["::1", first[1]],
      ] as const) {
        const c = connect(port ?? 0, host);
        await new Promise((r) => c.once("connect", r));
        sockets.push(c);
      }
      const later = [await listen("127.0.0.1"), await listen("::1"), await listen("0.0.0.0")];
      const whole = await readAllTables();
      const part = await readAllTables("/proc/net", undefined, { connections: false });
      const key = (t: { proto: string; local: string }) => `${t.proto} ${t.local}`;
      expect(part.listening.map(key).sort()).toEqual(whole.listening.map(key).sort());
      for (const port of [...first, ...later])
        expect(
          part.listening.some((t) => t.port === port),
          String(port),
        ).toBe(true);
      expect(part.connections).toEqual([]);
      expect(whole.connections.length).toBeGreaterThanOrEqual(4);
    } finally {
      for (const s of sockets) s.destroy();
      for (const srv of servers) srv.close();
    }
  });

  it("listeners only stops at the first connection's row and keeps whole lines (a table as a file)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rn-net-"));
    try {
      const tcp = fixture("proc-net-tcp.txt");
      for (const proto of ["tcp", "tcp6", "udp", "udp6"])
        writeFileSync(join(dir, proto), fixture(`proc-net-${proto}.txt`));
      const part = await readAllTables(dir, undefined, { connections: false });
      const whole = await readAllTables(dir);
      // The recording lists its listeners before its connections, as the kernel does.
      expect(part.listening).toEqual(whole.listening);
      expect(parseTcpConnections(tcp).length).toBeGreaterThan(0);
      // A listener (another socket) after a connection row (never so in the kernel's order) is not read: the read
      // did stop there.
      writeFileSync(
        join(dir, "tcp"),
        `${tcp}${
          tcp
            .split("\n")
            .find((l) => / 0A /.test(l))
            ?.replace(/^(\s*)\d+:/, "$1999:")
            .replace(/:([0-9A-F]{4}) /, ":FFFE ")
            .replace(" 1602701 ", " 1602799 ") ?? ""
        }\n`,
      );
      const after = await readAllTables(dir, undefined, { connections: false });
      expect(after.listening.some((t) => t.port === 0xfffe)).toBe(false);
      expect((await readAllTables(dir)).listening.some((t) => t.port === 0xfffe)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
