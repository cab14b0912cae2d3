/**
 * When the service server knocks at systemd's bus again (systemd/bus.ts): a refusal is left alone 5 s, then twice
 * as long at each refusal in a row (systemd logs every one); a missing socket, or one nobody listens on (the
 * middle of a daemon-reexec), is tried again at the next call. Against peers on real unix sockets; the clock is
 * faked (performance only: the calls' own timers stay real).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getProperty } from "@roadnerd/conventions";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { BUS_RETRY_FIRST_MS, BUS_RETRY_MS, systemdBus } from "../src/systemd/bus.ts";

const dir = mkdtempSync(join(tmpdir(), "rn-bus-retry-"));
const servers: Server[] = [];
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(() => {
  vi.useFakeTimers({ toFake: ["performance"] });
});
afterEach(() => {
  vi.useRealTimers();
  for (const s of servers.splice(0)) s.close();
});

/** A peer that closes every connection at once (systemd refusing a pid it cannot see); counts them. */
async function refusing(path: string): Promise<() => number> {
  let n = 0;
  const server = createServer((sock) => {
    n += 1;
    sock.destroy();
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(path, r));
  return () => n;
}

/** A METHOD_RETURN with no body answering serial 1: the header, and one field, REPLY_SERIAL (u) = 1. */
const RETURN_TO_SERIAL_1 = Buffer.from([0x6c, 2, 0, 1, 0, 0, 0, 0, 9, 0, 0, 0, 8, 0, 0, 0, 5, 1, 0x75, 0, 1, 0, 0, 0]);

const call = [getProperty("/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "Version")];
const busAt = (path: string) =>
  systemdBus.create({
    config: { SYSTEMD_BUS: path, SYSTEMD_BOOTED_DIR: "/nonexistent" } as never,
    log: undefined as never,
  });

describe("the service server's knocks at systemd's bus", () => {
  it("a refusal: left alone 5 s, then 10, 20, … up to a minute; every call meanwhile asks the command", async () => {
    const path = join(dir, "refusing");
    const knocks = await refusing(path);
    const bus = busAt(path);
    expect(await bus.ask(call, 5_000)).toBeUndefined();
    expect(await bus.ask(call, 5_000)).toBeUndefined();
    expect(knocks()).toBe(1);
    let wait = BUS_RETRY_FIRST_MS;
    for (let k = 2; k <= 7; k++) {
      vi.advanceTimersByTime(wait - 1);
      expect(await bus.ask(call, 5_000)).toBeUndefined();
      expect(knocks(), `before ${wait} ms`).toBe(k - 1);
      vi.advanceTimersByTime(1);
      expect(await bus.ask(call, 5_000)).toBeUndefined();
      expect(knocks(), `at ${wait} ms`).toBe(k);
      wait = Math.min(BUS_RETRY_MS, wait * 2);
    }
    expect(wait).toBe(BUS_RETRY_MS);
  });

  it("refusals met at once (calls in flight together) count as one: the next knock is 5 s later, not 60", async () => {
    const path = join(dir, "together");
    const knocks = await refusing(path);
    const bus = busAt(path);
    await Promise.all(Array.from({ length: 5 }, () => bus.ask(call, 5_000)));
    expect(knocks()).toBe(5);
    vi.advanceTimersByTime(BUS_RETRY_FIRST_MS);
    expect(await bus.ask(call, 5_000)).toBeUndefined();
    expect(knocks()).toBe(6);
  });

  it("after systemd has answered, a close before the OK (its daemon-reexec) is not held against the bus", async () => {
    const path = join(dir, "reexec");
    let closing = false;
    let knocks = 0;
    const server = createServer((sock) => {
      knocks += 1;
      if (closing) {
        sock.destroy();
        return;
      }
      let authed = false;
      sock.on("data", () => {
        if (!authed) {
          authed = true;
          sock.write("OK 0123456789abcdef0123456789abcdef\r\n");
        } else sock.write(RETURN_TO_SERIAL_1);
      });
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(path, r));
    const bus = busAt(path);
    expect(await bus.ask(call, 5_000)).toEqual([{ ok: true, body: [] }]);
    closing = true;
    expect(await bus.ask(call, 5_000)).toBeUndefined();
    closing = false;
    // The very next call knocks again and is answered: no wait was set.
    expect(await bus.ask(call, 5_000)).toEqual([{ ok: true, body: [] }]);
    expect(knocks).toBe(3);
  });

  it("no socket, or nobody listening: tried again at the very next call, and used once it is there", async () => {
    const path = join(dir, "later");
    const bus = busAt(path);
    expect(await bus.ask(call, 5_000)).toBeUndefined();
    const knocks = await refusing(path);
    expect(await bus.ask(call, 5_000)).toBeUndefined();
    expect(knocks()).toBe(1);
  });

  it("SYSTEMD_BUS=off never knocks", async () => {
    const bus = systemdBus.create({
      config: { SYSTEMD_BUS: "off", SYSTEMD_BOOTED_DIR: dir } as never,
      log: undefined as never,
    });
    expect(await bus.ask(call, 5_000)).toBeUndefined();
  });
});
