/**
 * The attach layer with real server processes (the built network server): nothing runs until the first
 * call, then one process is reused; idle detach; a crash is restarted once; a bin that never listens or
 * dies at start is a typed E_ATTACH; a server already running elsewhere is used, never spawned.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { liveSupervised } from "@roadnerd/conventions/supervise";
import { readRegistry } from "@roadnerd/registry";
import { type SpawnedServer, scaledDeadline, spawnServer } from "@roadnerd/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type AttachEvent, Attacher } from "../src/attach.ts";
import { AttachError } from "../src/errors.ts";

const servers = readRegistry();
let dir: string;
const attachers: Attacher[] = [];

function attacher(options: Partial<ConstructorParameters<typeof Attacher>[0]> = {}): Attacher {
  // Room for a loaded machine to start a server; no assertion rests on how long it took.
  const a = new Attacher({ servers, attachTimeoutMs: 60_000, ...options });
  attachers.push(a);
  return a;
}

/** Bounded at 30 s: a loaded machine may take seconds to start or stop a process. */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 600; i += 1) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rn-attach-"));
  await writeFile(join(dir, "never-listens.mjs"), "setInterval(() => {}, 1000);\n");
  await writeFile(join(dir, "dies.mjs"), "console.error('cannot start: bad config'); process.exit(2);\n");
});

afterEach(async () => {
  await Promise.all(attachers.splice(0).map((a) => a.close()));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("attach on request", () => {
  it("spawns on the first call, reuses the process, and detaches on close", async () => {
    const events: AttachEvent[] = [];
    const a = attacher({ onEvent: (e) => events.push(e) });
    expect(a.isRunning("network")).toBe(false);
    const [first, second] = await Promise.all([
      a.call("network", "route_info", scaledDeadline()),
      a.call("network", "iface_info", scaledDeadline()),
    ]);
    // Two calls at once share one spawn.
    expect(events.filter((e) => e.kind === "attached")).toHaveLength(1);
    expect([first.attached, second.attached].sort()).toEqual([true, true]);
    const pid = a.pidOf("network");
    expect(pid).toBeGreaterThan(0);
    expect(first.result).toHaveProperty("default_gateway");
    expect(second.result).toHaveProperty("interfaces");
    const third = await a.call("network", "route_info", { run_id: "attach-test-1", ...scaledDeadline() });
    expect(third.attached).toBe(false);
    expect(third.result.run_id).toBe("attach-test-1");
    expect(a.pidOf("network")).toBe(pid);
    await a.close();
    expect(a.isRunning("network")).toBe(false);
    expect(events.map((e) => e.kind)).toEqual(["attached", "detached"]);
    await expect(a.ensure("network")).rejects.toMatchObject({ code: "E_ATTACH" });
  });

  it("detaches after the idle time and attaches again on the next call", async () => {
    const events: string[] = [];
    const a = attacher({ idleMs: 200, onEvent: (e) => events.push(e.kind) });
    await a.call("network", "route_info", scaledDeadline());
    const pid = a.pidOf("network");
    await until(() => !a.isRunning("network"), "idle detach");
    expect(events).toEqual(["attached", "detached"]);
    const again = await a.call("network", "route_info", scaledDeadline());
    expect(again).toMatchObject({ attached: true, restarted: false });
    expect(a.pidOf("network")).not.toBe(pid);
  });

  it("restarts a server that died, once, and says so (how it ended too)", async () => {
    const events: string[] = [];
    const hows: (string | undefined)[] = [];
    const a = attacher({
      onEvent: (e) => {
        events.push(e.kind);
        if (e.kind === "exited") hows.push(e.how);
      },
    });
    await a.call("network", "route_info", scaledDeadline());
    const pid = a.pidOf("network") as number;
    process.kill(-pid, "SIGKILL");
    await until(() => !a.isRunning("network"), "the crash to be noticed");
    const r = await a.call("network", "route_info", scaledDeadline());
    expect(r).toMatchObject({ attached: true, restarted: true });
    expect(a.pidOf("network")).not.toBe(pid);
    expect(events).toEqual(["attached", "exited", "restarted"]);
    expect(hows).toEqual(["SIGKILL"]);
  });

  it("a server that dies under a call is restarted once and the call retried", async () => {
    // A TCP peer that accepts and never answers keeps http_check busy until its deadline.
    let connections = 0;
    const silent = createServer(() => {
      connections += 1;
    });
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", () => r()));
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`;
    try {
      const events: string[] = [];
      const a = attacher({ onEvent: (e) => events.push(e.kind) });
      await a.ensure("network");
      const pid = a.pidOf("network") as number;
      // The server dies while its probe waits on the silent peer (3 s: room for a loaded machine to kill it first).
      const pending = a.call("network", "http_check", { url, timeout_ms: 3000 });
      await until(() => connections > 0, "the probe to reach the silent peer");
      process.kill(-pid, "SIGKILL");
      const r = await pending;
      expect(r).toMatchObject({ attached: true, restarted: true });
      expect(r.result).toMatchObject({ url, error: "E_TIMEOUT" });
      expect(a.pidOf("network")).not.toBe(pid);
      expect(events).toEqual(["attached", "exited", "restarted"]);
    } finally {
      silent.close();
    }
  });

  it("a server's own error passes through with its code and nothing is restarted", async () => {
    const a = attacher();
    await expect(a.call("network", "no_such_tool", {})).rejects.toMatchObject({ code: "E_UNKNOWN_TOOL" });
    await expect(a.call("network", "dns_resolve", { qname: "--x" })).rejects.toMatchObject({ code: "E_INVALID_INPUT" });
  });
});

describe("attach failures are typed", () => {
  it("a bin that never listens: E_ATTACH (listen) within the attach timeout, child killed", async () => {
    const a = attacher({
      attachTimeoutMs: 400,
      launch: () => ({ argv: [process.execPath, join(dir, "never-listens.mjs")], env: {} }),
    });
    const err = await a.call("network", "route_info", {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AttachError);
    expect(err).toMatchObject({ code: "E_ATTACH", server: "network", phase: "listen" });
    await until(() => liveSupervised() === 0, "the stalled child to be killed");
  });

  it("a bin that exits at start: E_ATTACH with its stderr", async () => {
    const a = attacher({ launch: () => ({ argv: [process.execPath, join(dir, "dies.mjs")], env: {} }) });
    const err = (await a.ensure("network").catch((e: unknown) => e)) as AttachError;
    expect(err).toMatchObject({ code: "E_ATTACH", phase: "listen" });
    expect(err.message).toContain("cannot start: bad config");
  });

  it("a server that is not registered is refused before anything runs", async () => {
    const a = attacher();
    await expect(a.ensure("nonesuch")).rejects.toMatchObject({ code: "E_ATTACH", phase: "spawn" });
    expect(liveSupervised()).toBe(0);
  });
});

describe("servers running elsewhere", () => {
  let running: SpawnedServer | undefined;
  afterEach(async () => {
    await running?.stop();
    running = undefined;
  });

  it("a configured URL is used, never spawned, with its token", async () => {
    const token = "remote-token-0123456789abcdef";
    running = await spawnServer("network", { env: { AUTH_TOKEN: token } });
    const events: AttachEvent[] = [];
    const a = attacher({ remote: new Map([["network", { url: running.url, token }]]), onEvent: (e) => events.push(e) });
    const first = await a.call("network", "route_info", scaledDeadline());
    const second = await a.call("network", "route_info", scaledDeadline());
    expect([first.attached, second.attached]).toEqual([true, false]);
    expect(a.isRunning("network")).toBe(false);
    expect(liveSupervised()).toBe(0);
    expect(events).toEqual([expect.objectContaining({ server: "network", kind: "attached", url: running.url })]);
  });

  it("a configured URL with nothing there: E_ATTACH (remote)", async () => {
    const a = attacher({ attachTimeoutMs: 500, remote: new Map([["network", { url: "http://127.0.0.1:9" }]]) });
    await expect(a.call("network", "route_info", {})).rejects.toMatchObject({ code: "E_ATTACH", phase: "remote" });
  });
});
