import { readFileSync, readlinkSync } from "node:fs";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { release } from "node:os";
import { setTimeout } from "node:timers/promises";
import { createClient } from "@roadnerd/client";
import type { ResultOf } from "@roadnerd/conventions";
import { callTool } from "@roadnerd/conventions/testing";
import { type SpawnedServer, spawnServer } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCgroupUnit } from "../../src/proc/cgroup-unit.ts";
import { server } from "../../src/server.ts";
import { listeningSockets } from "../../src/tools/listening-sockets.ts";
import { whoUsesPort } from "../../src/tools/who-uses-port.ts";
import { startCHelper } from "../helpers/c-helper.ts";
import { HOLDER_CMD, type Holder, leakedSecrets, NODE_EXE, startHolder } from "../helpers/holder.ts";

let holder: Holder;
let port: number;
const netns = readlinkSync("/proc/self/ns/net");
// The child inherits this process's cgroup: whatever unit that is on this machine (none here: systemd is not PID 1).
const unit = parseCgroupUnit(readFileSync("/proc/self/cgroup", "utf8")).unit;

beforeAll(async () => {
  // One port number on TCP 127.0.0.1, TCP [::1] and UDP 127.0.0.1, all in one child.
  holder = await startHolder([
    { proto: "tcp", host: "127.0.0.1", port: 0 },
    { proto: "tcp6", host: "::1", port: "same" },
    { proto: "udp", host: "127.0.0.1", port: "same" },
  ]);
  port = holder.sockets[0]?.port as number;
});

afterAll(async () => {
  await holder?.stop();
});

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const p = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return p;
}

describe("who_uses_port", () => {
  it("names the holder of a TCP socket bound to the port but not listening (Linux 6.8 and later)", async () => {
    // "Address already in use" with nothing listening: a program that bound and never listened.
    const c = await startCHelper("bound-only");
    try {
      const bound = c.port;
      const r = await callTool(server, whoUsesPort, { port: bound });
      const [major = 0, minor = 0] = release().split(".").map(Number);
      if (major > 6 || (major === 6 && minor >= 8)) {
        // The kernel dumps bound-only TCP sockets when asked (TCP_BOUND_INACTIVE).
        expect(r.in_use).toBe(true);
        expect(r.pids.map((p) => p.pid)).toEqual([c.pid]);
        expect(r.pids[0]?.sockets).toEqual([{ proto: "tcp", local: `127.0.0.1:${bound}`, bound: true }]);
        expect(r.summary).toContain(`on tcp 127.0.0.1:${bound} (bound, not listening)`);
      } else {
        // Older kernels dump none: nothing to name (as ss, which cannot see them either).
        expect(r.in_use).toBe(false);
      }
      // Not a listener: listening_sockets does not list it.
      const all = await callTool(server, listeningSockets, {});
      expect(all.sockets.some((s) => s.local === `127.0.0.1:${bound}`)).toBe(false);
    } finally {
      await c.stop();
    }
  });

  it("names the pid, process, masked command, executable, user and every socket on the port", async () => {
    const r = await callTool(server, whoUsesPort, { port });
    expect(r).toEqual({
      port,
      in_use: true,
      pids: [
        {
          pid: holder.pid,
          process: "node",
          cmd: HOLDER_CMD,
          exe: NODE_EXE,
          unit,
          user: "root",
          sockets: [
            { proto: "tcp", local: `127.0.0.1:${port}` },
            { proto: "tcp6", local: `[::1]:${port}` },
            { proto: "udp", local: `127.0.0.1:${port}` },
          ],
        },
      ],
      unowned: [],
      note: null,
      connections: {},
      netns,
      source: "netlink",
      summary: `port ${port} is held by node (pid ${holder.pid}) on tcp 127.0.0.1:${port}, tcp6 [::1]:${port}, udp 127.0.0.1:${port}`,
    });
    expect(leakedSecrets(r)).toEqual([]);
  });

  it("answers the same from /proc/net alone (SOCKETS_SOURCE=proc) and through `ss` (SOCKETS_SOURCE=ss)", async () => {
    const viaNetlink = await callTool(server, whoUsesPort, { port });
    const viaProc = await callTool(server, whoUsesPort, { port }, { env: { SOCKETS_SOURCE: "proc" } });
    const viaSs = await callTool(server, whoUsesPort, { port }, { env: { SOCKETS_SOURCE: "ss" } });
    expect(viaProc.source).toBe("proc");
    expect({ ...viaProc, source: "netlink" }).toEqual(viaNetlink);
    expect({ ...viaSs, source: "netlink", connections: {} }).toEqual(viaNetlink);
    expect(viaSs.connections).toBeNull();
  });

  it("counts a port's connections by state (established, then TIME_WAIT), the same with SOCKETS_SOURCE=proc", async () => {
    const accepted: Socket[] = [];
    const srv = createServer((s) => accepted.push(s));
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    const p = (srv.address() as AddressInfo).port;
    const clients = [connect(p, "127.0.0.1"), connect(p, "::ffff:127.0.0.1"), connect(p, "127.0.0.1")];
    try {
      await Promise.all(clients.map((c) => new Promise((r) => c.once("connect", r))));
      for (let i = 0; i < 200 && accepted.length < clients.length; i++) await setTimeout(5);
      const viaNetlink = await callTool(server, whoUsesPort, { port: p });
      const viaProc = await callTool(server, whoUsesPort, { port: p }, { env: { SOCKETS_SOURCE: "proc" } });
      // The accepted ends have local port p; the clients' ends (another local port) are not the port's.
      expect(viaNetlink.connections).toEqual({ established: 3 });
      expect(viaNetlink.source).toBe("netlink");
      expect(viaProc.connections).toEqual(viaNetlink.connections);
      // The server side closes first: its ends linger in TIME_WAIT.
      for (const s of accepted) s.end();
      await Promise.all(
        clients.map((c) => {
          c.on("end", () => c.end());
          c.resume();
          return new Promise((r) => c.once("close", r));
        }),
      );
      for (let i = 0; i < 200; i++) {
        const now = await callTool(server, whoUsesPort, { port: p });
        if (now.connections?.time_wait === 3) break;
        await setTimeout(5);
      }
      const after = await callTool(server, whoUsesPort, { port: p });
      expect(after.connections).toEqual({ time_wait: 3 });
      const afterProc = await callTool(server, whoUsesPort, { port: p }, { env: { SOCKETS_SOURCE: "proc" } });
      expect(afterProc.connections).toEqual(after.connections);
    } finally {
      for (const c of clients) c.destroy();
      for (const s of accepted) s.destroy();
      await new Promise<void>((r) => srv.close(() => r()));
    }
  });

  it("lists both processes holding one shared socket (a forked worker)", async () => {
    const shared = await startHolder([{ proto: "tcp", host: "127.0.0.1", port: 0 }], { share: true });
    try {
      const p = shared.sockets[0]?.port as number;
      const r = await callTool(server, whoUsesPort, { port: p });
      expect(r.pids.map((h) => [h.pid, h.process, h.sockets])).toEqual(
        [shared.pid, shared.worker as number]
          .sort((a, b) => a - b)
          .map((pid) => [pid, "node", [{ proto: "tcp", local: `127.0.0.1:${p}` }]]),
      );
      expect(leakedSecrets(r)).toEqual([]);
    } finally {
      await shared.stop();
    }
  });

  it("answers a port nobody holds as a result, not an error", async () => {
    const p = await freePort();
    const r = await callTool(server, whoUsesPort, { port: p });
    expect(r).toEqual({
      port: p,
      in_use: false,
      pids: [],
      unowned: [],
      note: null,
      connections: {},
      netns,
      source: "netlink",
      summary: `nothing listens on port ${p} in this network namespace`,
    });
  });

  it("says when nothing listens but connections in TIME_WAIT still use the port (the restart that cannot bind)", async () => {
    // The server side closes first, so its end (local port p) lingers in TIME_WAIT after the listener is gone.
    const srv = createServer((s) => s.end());
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    const p = (srv.address() as AddressInfo).port;
    const client = connect(p, "127.0.0.1");
    client.on("end", () => client.end());
    client.resume();
    await new Promise((r) => client.once("close", r));
    await new Promise<void>((r) => srv.close(() => r()));
    const r = await callTool(server, whoUsesPort, { port: p });
    expect(r).toMatchObject({ port: p, in_use: false, pids: [], connections: { time_wait: 1 } });
    expect(r.summary).toBe(
      `nothing listens on port ${p} in this network namespace; 1 connection(s) in TIME_WAIT still use it (a bind without SO_REUSEADDR fails until they expire)`,
    );
  });
});

describe("who_uses_port run by an unprivileged user (setpriv nobody)", () => {
  let srv: SpawnedServer;
  beforeAll(async () => {
    srv = await spawnServer("ports", {
      wrap: ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"],
      // Wherever the checkout is (a 0700 home included), nobody runs a copy it can reach.
      otherUser: true,
    });
  });
  afterAll(async () => {
    await srv?.stop();
  });

  it("sees root's listeners but not their holders, and says why", async () => {
    const client = createClient(srv.url);
    const r = await client.call<ResultOf<typeof whoUsesPort>>("who_uses_port", { port });
    expect(r.in_use).toBe(true);
    expect(r.pids).toEqual([]);
    expect(r.unowned).toEqual([
      { proto: "tcp", local: `127.0.0.1:${port}` },
      { proto: "tcp6", local: `[::1]:${port}` },
      { proto: "udp", local: `127.0.0.1:${port}` },
    ]);
    expect(r.note).toMatch(
      /^no visible process holds it; \d+ processes' file descriptors are unreadable to this server \(not root\)/,
    );
    expect(r.summary).toBe(`port ${port} is held by 3 socket(s) whose process is not visible`);
  });
});
