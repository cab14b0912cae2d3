/**
 * listening_sockets against real listeners: TCP and UDP, IPv4 and IPv6, opened in this test process and in a
 * child process with a known argv; the same answer from the kernel's socket diagnostics (netlink, the default
 * where the kernel's addon is built: `pnpm build`, as `pnpm test` does), from /proc/net and from `ss`.
 */
import dgram from "node:dgram";
import { readFileSync, readlinkSync } from "node:fs";
import { type AddressInfo, createServer, type Server } from "node:net";
import { basename } from "node:path";
import type { ResultOf } from "@roadnerd/conventions";
import { callTool } from "@roadnerd/conventions/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { server } from "../../src/server.ts";
import { listeningSockets } from "../../src/tools/listening-sockets.ts";
import { type Holder, startHolder } from "../helpers/holder.ts";

const ownComm = readFileSync("/proc/self/stat", "utf8").replace(/^\d+ \((.*)\) .*$/s, "$1");
// Node ≥ 24 renames its main thread (and so the process's comm) "MainThread": the program's name is shown.
const ownName = ownComm.endsWith("MainThread") ? basename(process.argv[0] ?? "node") : ownComm;
let tcp4: Server;
let tcp6: Server;
let udp4: dgram.Socket;
let udp6: dgram.Socket;
let child: Holder;
const port = (s: Server) => (s.address() as AddressInfo).port;

beforeAll(async () => {
  tcp4 = createServer();
  tcp6 = createServer();
  await new Promise<void>((r) => tcp4.listen(0, "127.0.0.1", r));
  await new Promise<void>((r) => tcp6.listen(0, "::1", r));
  udp4 = dgram.createSocket("udp4");
  udp6 = dgram.createSocket("udp6");
  await new Promise<void>((r) => udp4.bind(0, "127.0.0.1", r));
  await new Promise<void>((r) => udp6.bind(0, "::1", r));
  child = await startHolder([
    { proto: "tcp", host: "0.0.0.0", port: 0 },
    { proto: "tcp6", host: "::", port: 0 },
    { proto: "udp", host: "0.0.0.0", port: 0 },
    { proto: "udp6", host: "::", port: 0 },
  ]);
});

afterAll(async () => {
  await child?.stop();
  tcp4?.close();
  tcp6?.close();
  udp4?.close();
  udp6?.close();
});

function expected() {
  const mine = { pid: process.pid, process: ownName, holders: 1 };
  const theirs = { pid: child.pid, process: "node", holders: 1 };
  const [c4, c6, cu4, cu6] = child.sockets.map((s) => s.port) as [number, number, number, number];
  return [
    { proto: "tcp", local: `127.0.0.1:${port(tcp4)}`, port: port(tcp4), ...mine },
    { proto: "tcp6", local: `[::1]:${port(tcp6)}`, port: port(tcp6), ...mine },
    { proto: "udp", local: `127.0.0.1:${udp4.address().port}`, port: udp4.address().port, ...mine },
    { proto: "udp6", local: `[::1]:${udp6.address().port}`, port: udp6.address().port, ...mine },
    { proto: "tcp", local: `0.0.0.0:${c4}`, port: c4, ...theirs },
    { proto: "tcp6", local: `[::]:${c6}`, port: c6, ...theirs },
    { proto: "udp", local: `0.0.0.0:${cu4}`, port: cu4, ...theirs },
    { proto: "udp6", local: `[::]:${cu6}`, port: cu6, ...theirs },
  ];
}

type Sockets = ResultOf<typeof listeningSockets>["sockets"];
const ours = (sockets: Sockets) => {
  const want = new Set(expected().map((e) => `${e.proto} ${e.local}`));
  return sockets.filter((s) => want.has(`${s.proto} ${s.local}`));
};
const sortLike = <T extends { proto: string; port: number }>(xs: T[]) =>
  [...xs].sort((a, b) => a.port - b.port || a.proto.localeCompare(b.proto));

/**
 * A call whose answer lists every socket of ours, of at most three. Other test files open and close sockets in
 * this network namespace while the tables are read a page at a time, and the kernel resumes each read by
 * position: a row can be skipped (docs/security.md, "What a local user can make the socket tables say"). A
 * tool that never lists one of ours still fails.
 */
async function listing(input: Record<string, unknown>, env?: Record<string, string>) {
  const want = (proto?: string) => sortLike(expected().filter((e) => !proto || e.proto.startsWith(proto)));
  let r = await callTool(server, listeningSockets, input, { env });
  for (let i = 1; i < 3 && ours(r.sockets).length < want(input.proto as string).length; i++)
    r = await callTool(server, listeningSockets, input, { env });
  return r;
}

describe("listening_sockets", () => {
  it("lists every socket this test and its child hold, with the exact pid and process name (netlink)", async () => {
    const r = await listing({ limit: 500 });
    expect(r.source).toBe("netlink");
    expect(r.netns).toBe(readlinkSync("/proc/self/ns/net"));
    expect(ours(r.sockets)).toEqual(sortLike(expected()));
    // Sorted by port, then proto.
    expect(r.sockets.map((s) => s.port)).toEqual([...r.sockets.map((s) => s.port)].sort((a, b) => a - b));
    expect(r.summary).toMatch(/^\d+ listening sockets: /);
  });

  it("answers the same from /proc/net (SOCKETS_SOURCE=proc) and from `ss -Hltnup` (SOCKETS_SOURCE=ss)", async () => {
    const viaNetlink = await listing({ limit: 500 });
    const viaProc = await listing({ limit: 500 }, { SOCKETS_SOURCE: "proc" });
    const viaSs = await listing({ limit: 500 }, { SOCKETS_SOURCE: "ss" });
    expect([viaProc.source, viaSs.source]).toEqual(["proc", "ss"]);
    expect(ours(viaProc.sockets)).toEqual(sortLike(expected()));
    expect(ours(viaSs.sockets)).toEqual(ours(viaNetlink.sockets));
    expect(ours(viaProc.sockets)).toEqual(ours(viaNetlink.sockets));
  });

  it("filters by proto and caps the list with truncated/omitted", async () => {
    const udp = await listing({ proto: "udp", limit: 500 });
    expect(udp.sockets.every((s) => s.proto.startsWith("udp"))).toBe(true);
    expect(ours(udp.sockets)).toEqual(sortLike(expected().filter((e) => e.proto.startsWith("udp"))));
    const one = await callTool(server, listeningSockets, { limit: 1 });
    expect(one.sockets).toHaveLength(1);
    expect(one.truncated).toBe(true);
    expect(one.omitted).toBeGreaterThanOrEqual(7);
  });

  it("counts every process holding a shared socket and names the lowest pid", async () => {
    // The holder forks a worker and hands it its TCP server over IPC: one socket, two processes.
    const shared = await startHolder([{ proto: "tcp", host: "127.0.0.1", port: 0 }], { share: true });
    try {
      const p = shared.sockets[0]?.port as number;
      const r = await callTool(server, listeningSockets, { proto: "tcp", limit: 500 });
      expect(shared.worker).toBeGreaterThan(0);
      expect(r.sockets.filter((s) => s.port === p)).toEqual([
        {
          proto: "tcp",
          local: `127.0.0.1:${p}`,
          port: p,
          pid: Math.min(shared.pid, shared.worker as number),
          process: "node",
          holders: 2,
        },
      ]);
    } finally {
      await shared.stop();
    }
  });
});
