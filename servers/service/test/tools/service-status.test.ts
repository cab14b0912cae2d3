import { readFileSync } from "node:fs";
import { join } from "node:path";
import { callTool, fakeBinaries } from "@roadnerd/conventions/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseShow } from "../../src/parse/systemctl-show.ts";
import { server } from "../../src/server.ts";
import { unitState } from "../../src/systemd/unit-state.ts";
import { serviceStatus } from "../../src/tools/service-status.ts";
import { type BootedService, bootService, createClient } from "../helpers/booted.ts";
import { fakeSystemd, isBooted } from "../helpers/no-systemd.ts";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const fixture = (p: string) => readFileSync(join(import.meta.dirname, "../fixtures", p), "utf8");

describe("service_status against a booted systemd", () => {
  let booted: BootedService;
  beforeAll(async () => {
    booted = await bootService();
  }, 60_000);
  afterAll(async () => {
    await booted?.stop();
  });
  const call = (name: string) => createClient(booted.server.url).call("service_status", { name, run_id: "st" });

  it("a running unit: loaded, active (running), since when it started", async () => {
    const r = await call("rn-sleeper");
    const shown = booted.harness.systemctl("show", "--property=ActiveEnterTimestamp", "--value", "rn-sleeper.service");
    expect(r).toEqual({
      name: "rn-sleeper.service",
      loaded: "loaded",
      active: "active",
      sub: "running",
      since: expect.stringMatching(ISO),
      description: "RoadNerd sleeper",
      result: "success",
      unit_file_state: "static",
      summary: expect.stringMatching(/^rn-sleeper\.service: active \(running\) since \S+Z; loaded$/),
      run_id: "st",
    });
    // The same instant systemctl prints (TZ=UTC), as ISO, and after the boot began.
    expect(shown.trim()).toBe(
      `${new Date(r.since as string).toUTCString().slice(0, 3)} ${(r.since as string).replace("T", " ").replace("Z", "")} UTC`,
    );
    expect((r.since as string) >= booted.bootedAfter).toBe(true);
  });

  it("a failed unit: failed (failed), result exit-code, since it failed", async () => {
    const r = await call("rn-broken.service");
    expect(r).toMatchObject({
      name: "rn-broken.service",
      loaded: "loaded",
      active: "failed",
      sub: "failed",
      description: "RoadNerd broken",
      result: "exit-code",
      unit_file_state: "static",
    });
    expect(r.since).toMatch(ISO);
    expect(r.summary).toBe(`rn-broken.service: failed (failed) (exit-code) since ${r.since}; loaded`);
  });

  it("a unit that does not exist is a diagnosis, not an error", async () => {
    const r = await call("no-such-unit");
    expect(r).toEqual({
      name: "no-such-unit.service",
      loaded: "not-found",
      active: "inactive",
      sub: "dead",
      since: null,
      description: "no-such-unit.service",
      result: "success",
      unit_file_state: null,
      summary: "no unit named no-such-unit.service (not-found)",
      run_id: "st",
    });
  });

  it("a unit of another type keeps its suffix (the journal's socket, started at boot)", async () => {
    const r = await call("systemd-journald.socket");
    expect(r).toMatchObject({ name: "systemd-journald.socket", loaded: "loaded", active: "active", sub: "running" });
  });
});

describe("service_status without systemd", () => {
  it("on this machine (systemd is not PID 1): E_UNSUPPORTED saying so, nothing spawned", async () => {
    expect(isBooted("/run/systemd/system")).toBe(false);
    await expect(callTool(server, serviceStatus, { name: "ssh" })).rejects.toMatchObject({
      code: "E_UNSUPPORTED",
      message: "systemd is not running as PID 1 on this machine (no /run/systemd/system): no units to ask about",
    });
  });

  it("systemd running but no systemctl: E_NO_BINARY naming it", async () => {
    const fake = await fakeSystemd({ missing: true });
    try {
      await expect(callTool(server, serviceStatus, { name: "ssh" }, { env: fake.env })).rejects.toMatchObject({
        code: "E_NO_BINARY",
        message: expect.stringContaining("systemctl is not installed"),
      });
    } finally {
      await fake.cleanup();
    }
  });

  it("systemctl that cannot reach systemd (a container with a stale /run/systemd/system): E_UNSUPPORTED with its words", async () => {
    const bin = await fakeBinaries({
      systemctl: [
        `echo "System has not been booted with systemd as init system (PID 1). Can't operate." >&2`,
        `echo "Failed to connect to bus: Host is down" >&2`,
        "exit 1",
      ].join("\n"),
    });
    const booted = await fakeSystemd();
    try {
      const env = { EXEC_PATH: bin.dir, SYSTEMD_BOOTED_DIR: booted.env.SYSTEMD_BOOTED_DIR as string };
      await expect(callTool(server, serviceStatus, { name: "ssh" }, { env })).rejects.toMatchObject({
        code: "E_UNSUPPORTED",
        message:
          "systemd is not reachable here: systemctl show said: System has not been booted with systemd as init system (PID 1). Can't operate. Failed to connect to bus: Host is down",
      });
    } finally {
      await bin.cleanup();
      await booted.cleanup();
    }
  });

  it("any other failure of systemctl is E_EXEC_FAILED with what it said", async () => {
    const bin = await fakeBinaries({ systemctl: "echo 'Access denied' >&2; exit 4" });
    const booted = await fakeSystemd();
    try {
      const env = { EXEC_PATH: bin.dir, SYSTEMD_BOOTED_DIR: booted.env.SYSTEMD_BOOTED_DIR as string };
      await expect(callTool(server, serviceStatus, { name: "ssh" }, { env })).rejects.toMatchObject({
        code: "E_EXEC_FAILED",
        message: "systemctl show exited with 4: Access denied",
      });
    } finally {
      await bin.cleanup();
      await booted.cleanup();
    }
  });

  it("runs exactly `systemctl show --property=… -- <unit>` and nothing else", async () => {
    const fake = await fakeSystemd({ output: fixture("systemd-252/show-rn-sleeper.service.txt") });
    try {
      const r = await callTool(server, serviceStatus, { name: "rn-sleeper" }, { env: fake.env });
      expect(r.active).toBe("active");
      expect(await fake.runs()).toEqual([
        [
          "systemctl",
          "show",
          "--property=Id,LoadState,ActiveState,SubState,Description,Result,UnitFileState,ActiveEnterTimestamp,ActiveExitTimestamp,InactiveEnterTimestamp,InactiveExitTimestamp",
          "--",
          "rn-sleeper.service",
        ],
      ]);
    } finally {
      await fake.cleanup();
    }
  });
});

describe("regression (issue 18): a Description= holding a credential", () => {
  it("is shown masked", async () => {
    const show = fixture("systemd-252/show-rn-sleeper.service.txt").replace(
      "Description=RoadNerd sleeper",
      "Description=Sync to postgres://sync:Pg5ecret@db.internal/app",
    );
    const fake = await fakeSystemd({ output: show });
    try {
      const r = await callTool(server, serviceStatus, { name: "rn-sleeper" }, { env: fake.env });
      expect(r.description).toBe("Sync to postgres://[masked]@db.internal/app");
    } finally {
      await fake.cleanup();
    }
  });
});

describe("systemctl show fixtures (247, 252, 255)", () => {
  const state = (p: string, name: string) => unitState(name, parseShow(fixture(p))[0] ?? {});

  it("252 (recorded): running, failed, not found", () => {
    expect(state("systemd-252/show-rn-sleeper.service.txt", "rn-sleeper.service")).toEqual({
      name: "rn-sleeper.service",
      loaded: "loaded",
      active: "active",
      sub: "running",
      since: "2026-11-22T09:53:12Z",
      description: "RoadNerd sleeper",
      result: "success",
      unit_file_state: "static",
    });
    expect(state("systemd-252/show-rn-broken.service.txt", "rn-broken.service")).toMatchObject({
      active: "failed",
      since: "2026-11-22T09:53:12Z",
      result: "exit-code",
    });
    expect(state("systemd-252/show-nope.service.txt", "nope.service")).toMatchObject({
      loaded: "not-found",
      active: "inactive",
      since: null,
      unit_file_state: null,
    });
  });

  it("247: a failed unit that never became active, and a running one", () => {
    expect(state("systemd-247/show-nginx.service.txt", "nginx.service")).toEqual({
      name: "nginx.service",
      loaded: "loaded",
      active: "failed",
      sub: "failed",
      since: "2021-05-25T08:14:03Z",
      description: "A high performance web server and a reverse proxy server",
      result: "exit-code",
      unit_file_state: "enabled",
    });
    expect(state("systemd-247/show-ssh.service.txt", "ssh.service").since).toBe("2021-05-24T19:02:11Z");
  });

  it("255: activating is dated by InactiveExitTimestamp; `n/a` is null", () => {
    expect(state("systemd-255/show-NetworkManager.service.txt", "NetworkManager.service")).toMatchObject({
      active: "activating",
      sub: "start",
      since: "2024-04-24T06:30:12Z",
    });
  });
});
