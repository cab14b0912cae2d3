/**
 * The kernel's socket diagnostics through native/sock-diag.c (ADR 0064), against real sockets: the listeners of
 * this network namespace as /proc/net says them, one connection found by its ends, nothing of another namespace,
 * and the native side refusing every question that is not a query. `pnpm build` compiles the addon (setup.sh
 * installs the compiler): here it must be there, or the suite would test the fallback twice.
 */
import { spawn, spawnSync } from "node:child_process";
import dgram from "node:dgram";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  dumpSockets,
  findSocket,
  parseAnswer,
  ROOM_LEFT_BYTES,
  sameFilesTable,
  sockDiagStatus,
  stateMask,
  TCP_STATE,
} from "../../src/netlink/sock-diag.ts";
import { ownSocketInodes as ownInodes } from "../../src/testing/procfs.ts";

const uid = process.getuid?.() ?? 0;
let tcp4: Server;
let tcp6: Server;
let udp4: dgram.Socket;
let client: Socket;
let accepted: Socket | undefined;
const port = (s: Server) => (s.address() as AddressInfo).port;

/** Listening rows of /proc/net/tcp or tcp6 as "port inode". */
function procListeners(table: string): Set<string> {
  const out = new Set<string>();
  for (const line of readFileSync(`/proc/net/${table}`, "utf8").split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f[3] === "0A") out.add(`${Number.parseInt((f[1] ?? "").split(":")[1] ?? "", 16)} ${f[9]}`);
  }
  return out;
}

beforeAll(async () => {
  tcp4 = createServer((s) => {
    accepted = s;
  });
  tcp6 = createServer();
  await new Promise<void>((r) => tcp4.listen(0, "127.0.0.1", r));
  await new Promise<void>((r) => tcp6.listen(0, "::1", r));
  udp4 = dgram.createSocket("udp4");
  await new Promise<void>((r) => udp4.bind(0, "127.0.0.1", r));
  client = connect(port(tcp4), "127.0.0.1");
  await new Promise((r) => client.once("connect", r));
});

afterAll(() => {
  client?.destroy();
  accepted?.destroy();
  tcp4?.close();
  tcp6?.close();
  udp4?.close();
});

describe("sock_diag: listeners", () => {
  it("the addon is built and answers", () => {
    expect(sockDiagStatus()).toMatchObject({ available: true });
  });

  it("lists our TCP listeners, IPv4 and IPv6, with address, port, owner and inode", () => {
    const v4 = dumpSockets(4, "tcp", stateMask(TCP_STATE.listen)) ?? [];
    const v6 = dumpSockets(6, "tcp", stateMask(TCP_STATE.listen)) ?? [];
    const a = v4.find((s) => s.localPort === port(tcp4));
    const b = v6.find((s) => s.localPort === port(tcp6));
    expect(a).toMatchObject({ family: 4, protocol: "tcp", state: TCP_STATE.listen, localAddress: "127.0.0.1", uid });
    expect(b).toMatchObject({ family: 6, protocol: "tcp", state: TCP_STATE.listen, localAddress: "::1", uid });
    expect(ownInodes()).toContain(a?.inode);
    expect(ownInodes()).toContain(b?.inode);
    // A LISTEN-only question answers listeners only (the connection of beforeAll is not among them).
    expect(v4.every((s) => s.state === TCP_STATE.listen)).toBe(true);
  });

  it("says what /proc/net/tcp and tcp6 say of the listeners (port and inode of each)", () => {
    const asRows = (family: 4 | 6) =>
      new Set((dumpSockets(family, "tcp", stateMask(TCP_STATE.listen)) ?? []).map((s) => `${s.localPort} ${s.inode}`));
    // Other test files open and close sockets meanwhile: ours at least, in both, and the two alike otherwise.
    for (const [family, table, mine] of [
      [4, "tcp", port(tcp4)],
      [6, "tcp6", port(tcp6)],
    ] as const) {
      const viaNetlink = asRows(family);
      const viaProc = procListeners(table);
      expect([...viaNetlink].some((r) => r.startsWith(`${mine} `))).toBe(true);
      expect([...viaProc].filter((r) => r.startsWith(`${mine} `))).toEqual(
        [...viaNetlink].filter((r) => r.startsWith(`${mine} `)),
      );
    }
  });

  it("with a port, the kernel answers that port's listeners only (filtered before it answers)", async () => {
    const others = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const s = createServer();
        await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
        return s;
      }),
    );
    try {
      const all = dumpSockets(4, "tcp", stateMask(TCP_STATE.listen)) ?? [];
      const one = dumpSockets(4, "tcp", stateMask(TCP_STATE.listen), port(tcp4)) ?? [];
      expect(all.length).toBeGreaterThan(50);
      expect(one.map((s) => [s.localPort, s.localAddress])).toEqual([[port(tcp4), "127.0.0.1"]]);
      expect(dumpSockets(4, "udp", stateMask(TCP_STATE.close), udp4.address().port)?.length).toBe(1);
    } finally {
      for (const s of others) s.close();
    }
  });

  it("lists a bound UDP socket in state 7, as ss -lu does", () => {
    const udp = dumpSockets(4, "udp", stateMask(TCP_STATE.close)) ?? [];
    expect(udp.find((s) => s.localPort === udp4.address().port)).toMatchObject({
      localAddress: "127.0.0.1",
      state: TCP_STATE.close,
      uid,
    });
  });

  it("sees only its own network namespace: a child in a new one lists none of ours", () => {
    const addon = sockDiagStatus().why.replace(/^loaded from /, "");
    const script = `const {request}=require(${JSON.stringify(addon)});const b=Buffer.alloc(72);b.writeUInt32LE(72,0);b.writeUInt16LE(20,4);b.writeUInt16LE(0x301,6);b[16]=2;b[17]=6;b.writeUInt32LE(1<<10,20);b.writeUInt32LE(0xffffffff,64);b.writeUInt32LE(0xffffffff,68);process.stdout.write(String(request(b).length))`;
    const here = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
    const there = spawnSync("unshare", ["--net", process.execPath, "-e", script], { encoding: "utf8" });
    expect(Number(here.stdout)).toBeGreaterThan(0);
    // A fresh namespace has no listener at all: an empty answer.
    expect(there.status, there.stderr).toBe(0);
    expect(there.stdout).toBe("0");
  });
});

describe("sock_diag: one connection by its ends", () => {
  it("finds the client's end of a loopback connection: established, our uid and inode", () => {
    const found = findSocket(
      4,
      "tcp",
      { address: "127.0.0.1", port: client.localPort ?? 0 },
      { address: "127.0.0.1", port: port(tcp4) },
    );
    expect(found).toMatchObject({
      state: TCP_STATE.established,
      localPort: client.localPort,
      remotePort: port(tcp4),
      uid,
    });
    expect(ownInodes()).toContain(found?.inode);
  });

  it("answers null for ends no socket has", () => {
    const none = findSocket(4, "tcp", { address: "127.0.0.1", port: 1 }, { address: "127.0.0.1", port: port(tcp4) });
    expect(none).toBeNull();
  });

  it("refuses an address of the wrong family before asking", () => {
    expect(() => findSocket(4, "tcp", { address: "::1", port: 1 }, { address: "127.0.0.1", port: 2 })).toThrow(
      /not an IPv4 address pair/,
    );
  });
});

describe("sock_diag: the native side asks queries only", () => {
  const { request } = createRequire(import.meta.url)(sockDiagStatus().why.replace(/^loaded from /, "")) as {
    request(q: unknown): Buffer;
  };
  /** A well-formed dump of TCP listeners, to be spoiled. */
  const good = () => {
    const b = Buffer.alloc(72);
    b.writeUInt32LE(72, 0);
    b.writeUInt16LE(20, 4);
    b.writeUInt16LE(0x301, 6);
    b[16] = 2;
    b[17] = 6;
    b.writeUInt32LE(1 << 10, 20);
    return b;
  };
  const codeOf = (q: unknown) => {
    try {
      request(q);
      return "answered";
    } catch (err) {
      return (err as NodeJS.ErrnoException).code;
    }
  };

  it("answers the well-formed question", () => {
    expect(parseAnswer("tcp", request(good())).some((s) => s.localPort === port(tcp4))).toBe(true);
  });

  it("says how big the first datagram with answers was: one with room left, or a full one past ROOM_LEFT_BYTES", async () => {
    // dumpSockets asks once when the answers came in a first datagram with room left (nothing was resumed); a
    // full first datagram must never look like one with room, or a resumed dump would go unchecked.
    const few = request(good()) as Buffer & { firstDatagram: number };
    expect(few.firstDatagram).toBeGreaterThan(0);
    expect(few.firstDatagram).toBeLessThanOrEqual(ROOM_LEFT_BYTES);
    const many: Server[] = [];
    try {
      // Past one datagram of the kept socket (the kernel sizes a dump's datagrams up to the largest read it has
      // seen on the socket, 32 KiB at most: ~260 answers), so the answer surely takes two.
      for (let i = 0; i < 300; i++) {
        const s = createServer();
        await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
        many.push(s);
      }
      const full = request(good()) as Buffer & { firstDatagram: number };
      expect(parseAnswer("tcp", full).length).toBeGreaterThanOrEqual(300);
      expect(full.firstDatagram).toBeGreaterThan(ROOM_LEFT_BYTES);
      expect(full.firstDatagram).toBeLessThan(full.length);
      // A question with no answer: no datagram carried one.
      const none = good();
      none.writeUInt32LE(0, 20); // no state asked
      expect((request(none) as Buffer & { firstDatagram: number }).firstDatagram).toBe(0);
    } finally {
      for (const s of many) s.close();
    }
  });

  it("refuses SOCK_DESTROY, other flags, a wrong length and what is not bytes, and the connection lives on", () => {
    const destroy = good();
    destroy.writeUInt16LE(21, 4); // SOCK_DESTROY: would close a socket
    const ack = good();
    ack.writeUInt16LE(0x305, 6); // NLM_F_ACK besides REQUEST|DUMP
    const noRequest = good();
    noRequest.writeUInt16LE(0x300, 6);
    const longer = Buffer.concat([good(), Buffer.alloc(8)]);
    expect(
      [destroy, ack, noRequest, longer, Buffer.alloc(8), Buffer.alloc(5000), "text", 42, undefined].map(codeOf),
    ).toEqual(Array(9).fill("EINVAL"));
    expect(client.destroyed).toBe(false);
    expect(
      findSocket(
        4,
        "tcp",
        { address: "127.0.0.1", port: client.localPort ?? 0 },
        { address: "127.0.0.1", port: port(tcp4) },
      ),
    ).toMatchObject({ state: TCP_STATE.established });
  });

  it("keeps one socket between questions; one the kernel refuses leaves the next answered right", () => {
    // Our descriptors that are NETLINK_SOCK_DIAG sockets (protocol 4 in /proc/net/netlink, by inode).
    const netlinkFds = () => {
      const diag = new Set(
        readFileSync("/proc/self/net/netlink", "utf8")
          .split("\n")
          .slice(1)
          .map((l) => l.trim().split(/\s+/))
          .filter((f) => f[1] === "4")
          .map((f) => f[9]),
      );
      return readdirSync("/proc/self/fd").filter((fd) => {
        try {
          return diag.has(/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))?.[1]);
        } catch {
          return false;
        }
      }).length;
    };
    request(good());
    const kept = netlinkFds();
    expect(kept).toBe(1);
    for (let i = 0; i < 200; i++) request(good());
    expect(netlinkFds()).toBe(kept);
    // A family the kernel has no handler for: refused by the kernel (not by our checks), then a good one.
    const refused = good();
    refused[16] = 99;
    expect(codeOf(refused)).toMatch(/^E[A-Z]+$/);
    expect(parseAnswer("tcp", request(good())).some((s) => s.localPort === port(tcp4))).toBe(true);
    expect(netlinkFds()).toBe(kept);
  });

  it("sameFiles: a thread sharing its process's files table says so (kcmp), a gone task is null", () => {
    const { sameFiles } = createRequire(import.meta.url)(sockDiagStatus().why.replace(/^loaded from /, "")) as {
      sameFiles(a: unknown, b: unknown): boolean | null;
    };
    const threads = readdirSync(`/proc/${process.pid}/task`).map(Number);
    expect(threads.length).toBeGreaterThan(1);
    for (const tid of threads) expect(sameFiles(process.pid, tid)).toBe(true);
    expect(sameFilesTable(process.pid, threads[0] ?? 0)).toBe(true);
    // Another process (a child of ours) has its own table; a pid nobody has cannot be compared.
    const child = spawn("sleep", ["30"], { stdio: "ignore" });
    try {
      expect(sameFiles(process.pid, child.pid ?? 0)).toBe(false);
    } finally {
      child.kill("SIGKILL");
    }
    expect(sameFiles(process.pid, 2 ** 22 + 1)).toBeNull();
    expect(sameFilesTable(process.pid, 2 ** 22 + 1)).toBeUndefined();
    for (const bad of [[0, 1], [-1, 1], ["1", 1], [1]]) {
      expect(() => (sameFiles as (...a: unknown[]) => unknown)(...bad)).toThrow(/two task ids/);
    }
  });

  it("answers or refuses with a code, never crashes, whatever bytes a query holds", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 200 }), fc.boolean(), (bytes, shaped) => {
        const q = Buffer.from(bytes);
        if (shaped && q.length >= 16) {
          q.writeUInt32LE(q.length, 0);
          q.writeUInt16LE(20, 4);
          q.writeUInt16LE(0x301, 6);
        }
        const code = codeOf(q);
        expect(code === "answered" || /^E[A-Z0-9]+$/.test(code ?? "")).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("parses a cut or damaged answer without throwing, keeping the whole messages", () => {
    const answer = request(good());
    const whole = parseAnswer("tcp", answer);
    expect(whole.length).toBeGreaterThan(0);
    expect(parseAnswer("tcp", answer.subarray(0, answer.length - 10))).toEqual(whole.slice(0, -1));
    const damaged = Buffer.from(answer);
    damaged.writeUInt32LE(0xffffff, 0);
    expect(parseAnswer("tcp", damaged)).toEqual([]);
  });
});
