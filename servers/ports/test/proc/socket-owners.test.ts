/**
 * Holders from /proc/<pid>/fd, shared between concurrent callers: a socket opened after a recent scan is still
 * found (the reuse rule rescans for an inode it has not seen), and concurrent callers all get their answer.
 */
import { readdirSync, readlinkSync } from "node:fs";
import { type AddressInfo, createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { readNetTables } from "../../src/proc/net-table.ts";
import { socketOwners } from "../../src/proc/socket-owners.ts";

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

async function listen(): Promise<{ port: number; inode: number }> {
  const s = createServer();
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  const inode = (await readNetTables()).find((t) => t.port === port)?.inode as number;
  return { port, inode };
}

/** This process's own socket inodes, read here independently. */
function ownSocketInodes(): Set<number> {
  const out = new Set<number>();
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (m) out.add(Number(m[1]));
    } catch {}
  }
  return out;
}

describe("socketOwners", () => {
  it("finds this process as the holder of its listener, and a socket opened right after that scan", async () => {
    const a = await listen();
    expect(ownSocketInodes().has(a.inode)).toBe(true);
    expect((await socketOwners(new Set([a.inode]))).holders.get(a.inode)).toEqual([process.pid]);
    const b = await listen();
    expect((await socketOwners(new Set([a.inode, b.inode]))).holders).toEqual(
      new Map([
        [a.inode, [process.pid]],
        [b.inode, [process.pid]],
      ]),
    );
  });

  it("answers concurrent callers, each for its own new socket", async () => {
    const socks = await Promise.all([listen(), listen(), listen(), listen(), listen()]);
    const answers = await Promise.all(socks.map((s) => socketOwners(new Set([s.inode]))));
    expect(answers.map((a, i) => a.holders.get(socks[i]?.inode as number))).toEqual(socks.map(() => [process.pid]));
  });

  it("leaves out an inode nobody holds, and counts no unreadable process as root", async () => {
    const r = await socketOwners(new Set([1]));
    expect(r.holders.size).toBe(0);
    expect(r.unreadable).toBe(0);
  });
});
