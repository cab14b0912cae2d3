/** How the server starts, as the orchestrator and operators rely on it: the bin, env, the listening line, --help. */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createClient } from "@roadnerd/client";
import { isLive } from "@roadnerd/conventions/testing";
import { serverEntry, spawnServer } from "@roadnerd/testkit";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

describe("starting roadnerd-network", () => {
  it("the package's bin is a committed launcher of the built entry", async () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    expect(pkg.bin).toEqual({ "roadnerd-network": "./bin/roadnerd-network.mjs" });
    expect(readFileSync(serverEntry("network"), "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
    const bin = fileURLToPath(new URL("../bin/roadnerd-network.mjs", import.meta.url));
    const { stdout } = await run(process.execPath, [bin, "--help"]);
    expect(stdout).toContain("default 7101");
  });

  it("PORT=0 binds a free port, logs one listening line with its url, and /healthz says what it can see", async () => {
    const server = await spawnServer("network", { env: { PORT: "0" } });
    try {
      const listening = server.lines.map((l) => JSON.parse(l)).filter((r) => r.msg === "listening");
      expect(listening).toHaveLength(1);
      expect(listening[0].url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const health = await createClient(server.url).healthz();
      expect(health).toMatchObject({ ok: true, name: "roadnerd-network", version: "0.1.0" });
      expect(health.capabilities).toMatchObject({ systemd_pid1: expect.any(Boolean), binaries: { ip: true } });
    } finally {
      await server.stop();
    }
  });

  it("still announces itself with LOG_LEVEL=warn, and exits 0 on SIGTERM", async () => {
    const server = await spawnServer("network", { env: { LOG_LEVEL: "warn" } });
    const exited = new Promise<number | null>((r) => server.child.once("exit", (code) => r(code)));
    await server.stop();
    expect(await exited).toBe(0);
  });

  it("SIGTERM sends `end` to every open stream, then exits without waiting out their duration", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rn-start-"));
    // DNS rounds go to a loopback address with nothing listening: refused at once, never the machine's resolver.
    await writeFile(join(dir, "resolv.conf"), "nameserver 127.0.0.9\n");
    const server = await spawnServer("network", { env: { RESOLV_CONF: join(dir, "resolv.conf") } });
    try {
      const client = createClient(server.url);
      const streams = Array.from({ length: 20 }, () => ({ events: [] as Array<{ event: string; data: unknown }> }));
      const watching = streams.map(async ({ events }, n) => {
        const query = { duration_ms: 120_000, interval_ms: 500, url: `http://127.0.0.1:1/${n % 4}` };
        for await (const e of client.stream("connectivity_watch", query)) events.push(e);
      });
      const opened = () => streams.every((s) => s.events.some((e) => e.event === "message"));
      for (let i = 0; i < 1200 && !opened(); i++) await new Promise((r) => setTimeout(r, 50));
      expect(opened()).toBe(true);
      const exited = new Promise<number | null>((r) => server.child.once("exit", (code) => r(code)));
      server.child.kill("SIGTERM");
      // The test's own timeout (60 s) is far below the streams' 120 s: exiting at all proves it did not wait.
      expect(await exited).toBe(0);
      await Promise.allSettled(watching);
      for (const { events } of streams)
        expect(events.at(-1)).toMatchObject({ event: "end", data: { reason: "shutdown" } });
    } finally {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("started by roadnerd (ROADNERD_PARENT_PID) it exits by itself once that parent is gone", async () => {
    // A parent pid that is not ours: from the server's view its starter has died (as after a SIGKILL).
    const server = await spawnServer("network", { env: { ROADNERD_PARENT_PID: "999999" } });
    const code = await new Promise<number | null>((resolve) => server.child.once("exit", resolve));
    expect(code).toBe(0);
    expect(server.lines.join("\n")).toContain('"signal":"parent gone"');
  });

  it("started by roadnerd through a helper (ADR 0068): it exits by itself once that helper is gone", async () => {
    // roadnerd (this test) stays alive; the process that started the server (a shell, in the spawn helper's
    // place) exits once it listens, so the server is reparented: from its view its starter has died.
    const dir = await mkdtemp(join(tmpdir(), "rn-reparent-"));
    const log = join(dir, "log");
    let pid = 0;
    let gone = false;
    try {
      const { stdout } = await run(
        "/bin/sh",
        [
          "-c",
          // Gone once the server has listened (its starter noted), as a helper that dies under a running server.
          `"$0" "$1" >"$2" 2>&1 & i=0; while [ $i -lt 600 ] && ! grep -q '"listening"' "$2"; do sleep 0.05; i=$((i+1)); done; echo $!`,
          process.execPath,
          serverEntry("network"),
          log,
        ],
        {
          env: { PATH: "/usr/bin:/bin", PORT: "0", ROADNERD_PARENT_PID: String(process.pid) },
        },
      );
      pid = Number(stdout.trim());
      expect(pid).toBeGreaterThan(0);
      // Running, not a zombie: its reaper is pid 1, not us.
      const alive = () => isLive(pid);
      for (let i = 0; i < 600 && alive(); i++) await new Promise((r) => setTimeout(r, 50));
      gone = !alive();
      expect(gone).toBe(true);
      expect(readFileSync(log, "utf8")).toContain('"msg":"listening"');
      expect(readFileSync(log, "utf8")).toContain('"signal":"parent gone"');
    } finally {
      // Still running (the assertion failed): ours to end.
      if (pid > 0 && !gone) process.kill(pid, "SIGKILL");
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("--help names the env vars, the server's own included", async () => {
    const { stdout } = await run(process.execPath, [serverEntry("network"), "--help"]);
    expect(stdout).toContain("--stdio");
    expect(stdout).toContain("default 7101");
    expect(stdout).toContain("RESOLV_CONF");
    expect(stdout).toContain("CAPTIVE_PROBES");
  });

  it("bad env or an unknown argument exits 2 with a clear message, before binding anything", async () => {
    const bad = await run(process.execPath, [serverEntry("network")], {
      env: { PATH: "/usr/bin:/bin", AUTH_TOKEN: "short" },
    }).catch((e: { code: number; stderr: string }) => e);
    expect(bad).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("AUTH_TOKEN must be at least 16 characters"),
    });
    const probes = await run(process.execPath, [serverEntry("network")], {
      env: { PATH: "/usr/bin:/bin", CAPTIVE_PROBES: "nope" },
    }).catch((e: { code: number; stderr: string }) => e);
    expect(probes).toMatchObject({ code: 2, stderr: expect.stringContaining("CAPTIVE_PROBES") });
    const arg = await run(process.execPath, [serverEntry("network"), "--verbose"]).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(arg).toMatchObject({ code: 2, stderr: expect.stringContaining("unknown argument: --verbose") });
  });
});
