/**
 * dns_config_watch over a built root: the first read, then one message when /etc/resolv.conf is switched (a new
 * symlink renamed over the old one, as the managers do), naming what changed; with nothing changing, one message
 * and the end at duration_ms.
 */
import { rename, symlink } from "node:fs/promises";
import type { MessageOf } from "@roadnerd/conventions";
import { collectStream } from "@roadnerd/conventions/testing";
import { afterEach, describe, expect, it, vi } from "vitest";
import { server } from "../../src/server.ts";
import { dnsConfigWatch } from "../../src/streams/dns-config-watch.ts";
import { type BuiltRoot, buildRoot } from "../helpers/build-root.ts";
import { layouts, NETWORK_MANAGER } from "../helpers/layouts.ts";

const roots: BuiltRoot[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const r of roots.splice(0)) await r.remove();
});
type Message = MessageOf<typeof dnsConfigWatch>;
const realSetTimeout = globalThis.setTimeout;

describe("dns_config_watch", () => {
  it("the first read, then the switch from resolved's stub to NetworkManager's file", async () => {
    const root = await buildRoot({ ...layouts.resolvedStub, "run/NetworkManager/resolv.conf": NETWORK_MANAGER });
    roots.push(root);
    const { messages, end } = await collectStream(
      server,
      dnsConfigWatch,
      { interval_ms: 250, duration_ms: 15_000, run_id: "w1" },
      {
        env: root.env,
        max: 2,
        onMessage: async (_m, index) => {
          if (index === 0) {
            await symlink("../run/NetworkManager/resolv.conf", `${root.dir}/etc/resolv.conf.new`);
            await rename(`${root.dir}/etc/resolv.conf.new`, `${root.dir}/etc/resolv.conf`);
          }
        },
      },
    );
    expect(end).toBe("closed");
    expect(messages).toEqual([
      {
        change: 0,
        changed: ["mode", "servers", "search", "managed_by", "read", "warnings"],
        mode: "resolved",
        servers: ["192.0.2.53", "2001:db8::53"],
        search: ["corp.example", "lab.test"],
        managed_by: "systemd-resolved",
        read: "/run/systemd/resolve/stub-resolv.conf",
        warnings: [],
        run_id: "w1",
        summary: "now: resolved (systemd-resolved) 192.0.2.53, 2001:db8::53",
      },
      {
        change: 1,
        changed: ["mode", "servers", "search", "managed_by", "read"],
        mode: "other",
        servers: ["192.0.2.1", "2001:db8::1"],
        search: ["home.example"],
        managed_by: "NetworkManager",
        read: "/run/NetworkManager/resolv.conf",
        warnings: [],
        run_id: "w1",
        summary: "change 1 (mode, servers, search, managed_by, read): other (NetworkManager) 192.0.2.1, 2001:db8::1",
      },
    ]);
  });

  it("nothing changes: one message, then the end at duration_ms", async () => {
    const root = await buildRoot(layouts.resolvconf);
    roots.push(root);
    // Rounds and the duration on the test's clock: the first read may take a loaded machine as long as it takes,
    // and the end comes at 900 ms exactly.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const messages: Message[] = [];
    let end: string | undefined;
    const watching = collectStream(
      server,
      dnsConfigWatch,
      { interval_ms: 250, duration_ms: 900 },
      { env: root.env, onMessage: (m) => void messages.push(m) },
    ).then((r) => {
      end = r.end;
    });
    for (let i = 0; i < 1000 && messages.length === 0; i++) await new Promise((r) => realSetTimeout(r, 10));
    await vi.advanceTimersByTimeAsync(899);
    await new Promise((r) => realSetTimeout(r, 20));
    expect(end).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    await watching;
    expect(end).toBe("duration");
    expect(messages.map((m) => [m.change, m.mode, m.servers])).toEqual([[0, "resolvconf", ["192.0.2.1", "192.0.2.2"]]]);
  });

  it("ends quietly when its duration runs out just as a round begins (regression: the cut read was an error)", async () => {
    const root = await buildRoot(layouts.resolvconf);
    roots.push(root);
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const messages: Message[] = [];
    const watching = collectStream(
      server,
      dnsConfigWatch,
      { interval_ms: 250, duration_ms: 500 },
      { env: root.env, onMessage: (m) => void messages.push(m) },
    ).then((r) => r.end);
    for (let i = 0; i < 1000 && messages.length === 0; i++) await new Promise((r) => realSetTimeout(r, 10));
    // The sleep after the first read ends, and before the next read can start, so does the duration.
    vi.advanceTimersByTime(250);
    vi.advanceTimersByTime(250);
    expect(await watching).toBe("duration");
    expect(messages).toHaveLength(1);
  });

  it("refuses an interval below 250 ms or an unknown key before reading anything", async () => {
    await expect(collectStream(server, dnsConfigWatch, { interval_ms: 10 })).rejects.toMatchObject({
      code: "E_INVALID_INPUT",
    });
    await expect(collectStream(server, dnsConfigWatch, { path: "/etc" })).rejects.toMatchObject({
      code: "E_INVALID_INPUT",
    });
  });
});
