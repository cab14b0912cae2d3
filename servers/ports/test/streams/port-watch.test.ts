/**
 * port_watch against a real listener that comes and goes: the first message is the state when the watch
 * began, then one message when the listener appears and one when it goes. The test reacts to each message
 * (no sleeps): it starts the holder after the first and stops it after the second.
 */
import { type AddressInfo, createServer } from "node:net";
import { collectStream } from "@roadnerd/conventions/testing";
import { describe, expect, it } from "vitest";
import { server } from "../../src/server.ts";
import { portWatch } from "../../src/streams/port-watch.ts";
import { HOLDER_CMD, type Holder, leakedSecrets, startHolder } from "../helpers/holder.ts";

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const p = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return p;
}

describe("port_watch", () => {
  it("says nothing listens, then that a listener appeared (with its process), then that it went away", async () => {
    const port = await freePort();
    let holder: Holder | undefined;
    let starting: Promise<Holder> | undefined;
    try {
      const { messages, end } = await collectStream(
        server,
        portWatch,
        { port, interval_ms: 100, duration_ms: 30_000 },
        {
          max: 3,
          onMessage: async (_m, index) => {
            if (index === 0) {
              starting = startHolder([{ proto: "tcp", host: "127.0.0.1", port }]);
              starting.then((h) => {
                holder = h;
              });
            }
            if (index === 1) void (await starting)?.stop();
          },
        },
      );
      expect(end).toBe("closed");
      expect(messages).toEqual([
        {
          change: "initial",
          listening: false,
          listeners: [],
          truncated: false,
          omitted: 0,
          summary: "nothing listens on the port",
        },
        {
          change: "appeared",
          listening: true,
          listeners: [{ proto: "tcp", local: `127.0.0.1:${port}`, pid: holder?.pid, process: "node", cmd: HOLDER_CMD }],
          truncated: false,
          omitted: 0,
          summary: `appeared: tcp 127.0.0.1:${port} by node (pid ${holder?.pid})`,
        },
        {
          change: "disappeared",
          listening: false,
          listeners: [],
          truncated: false,
          omitted: 0,
          summary: "the listener went away",
        },
      ]);
      expect(leakedSecrets(messages)).toEqual([]);
    } finally {
      await (holder ?? (await starting?.catch(() => undefined)))?.stop();
    }
  });

  it("says changed when another process joins a port that was already listening", async () => {
    const first = await startHolder([{ proto: "udp", host: "127.0.0.1", port: 0, reuse: true }]);
    const port = first.sockets[0]?.port as number;
    let joining: Promise<Holder> | undefined;
    try {
      const { messages, end } = await collectStream(
        server,
        portWatch,
        { port, interval_ms: 100, duration_ms: 30_000 },
        {
          max: 2,
          onMessage: (_m, index) => {
            if (index === 0) joining = startHolder([{ proto: "udp", host: "127.0.0.1", port, reuse: true }]);
          },
        },
      );
      const second = await joining;
      expect(end).toBe("closed");
      expect(messages.map((m) => [m.change, m.listening, m.listeners.map((l) => l.pid)])).toEqual([
        ["initial", true, [first.pid]],
        ["changed", true, [first.pid, second?.pid].sort((a, b) => (a ?? 0) - (b ?? 0))],
      ]);
    } finally {
      await first.stop();
      await (await joining?.catch(() => undefined))?.stop();
    }
  });

  it("starts with the current state when the port is already held", async () => {
    const holder = await startHolder([{ proto: "udp6", host: "::1", port: 0 }]);
    try {
      const port = holder.sockets[0]?.port as number;
      const { messages, end } = await collectStream(
        server,
        portWatch,
        { port, interval_ms: 100, duration_ms: 30_000 },
        { max: 1 },
      );
      expect(end).toBe("closed");
      expect(messages).toEqual([
        {
          change: "initial",
          listening: true,
          listeners: [{ proto: "udp6", local: `[::1]:${port}`, pid: holder.pid, process: "node", cmd: HOLDER_CMD }],
          truncated: false,
          omitted: 0,
          summary: `listening: udp6 [::1]:${port} by node (pid ${holder.pid})`,
        },
      ]);
    } finally {
      await holder.stop();
    }
  });

  it("lists at most `limit` listeners of a port held on many addresses, and counts the rest", async () => {
    const hosts = Array.from({ length: 8 }, (_, i) => `127.0.0.${i + 1}`);
    const holder = await startHolder(hosts.map((host, i) => ({ proto: "tcp", host, port: i === 0 ? 0 : "same" })));
    try {
      const port = holder.sockets[0]?.port as number;
      const { messages } = await collectStream(
        server,
        portWatch,
        { port, limit: 3, interval_ms: 100, duration_ms: 30_000 },
        { max: 1 },
      );
      expect(messages).toEqual([
        {
          change: "initial",
          listening: true,
          listeners: hosts
            .slice(0, 3)
            .map((h) => ({ proto: "tcp", local: `${h}:${port}`, pid: holder.pid, process: "node", cmd: HOLDER_CMD })),
          truncated: true,
          omitted: 5,
          summary: `listening: tcp 127.0.0.1:${port}, tcp 127.0.0.2:${port}, tcp 127.0.0.3:${port} and 5 more by node (pid ${holder.pid})`,
        },
      ]);
    } finally {
      await holder.stop();
    }
  });

  it("ends quietly when its duration runs out, even mid-round", async () => {
    const { messages, end } = await collectStream(server, portWatch, { port: 9, interval_ms: 100, duration_ms: 100 });
    expect(end).toBe("duration");
    expect(messages.length).toBeLessThanOrEqual(1);
    for (const m of messages) expect(m).toMatchObject({ change: "initial", listening: false });
  });
});
