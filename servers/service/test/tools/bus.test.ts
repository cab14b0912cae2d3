/**
 * systemd's bus against its commands, on a real booted systemd: a server with no systemctl or journalctl to run
 * (EXEC_PATH at an empty directory) still answers service_status and list_failed_units from the bus, with the
 * very answers a server told SYSTEMD_BUS=off gets from the commands; a server outside systemd's PID namespace
 * (whose pid systemd cannot see, so it refuses the private socket) answers from the commands, and knocks once
 * a retry period, not once a call.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type SpawnedServer, scaledDeadline, spawnServer } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BootedService, bootService, createClient } from "../helpers/booted.ts";

describe("systemd's bus against systemctl, on a booted systemd", () => {
  let booted: BootedService;
  let busOnly: SpawnedServer;
  let commandsOnly: SpawnedServer;
  let outside: SpawnedServer;
  const empty = mkdtempSync(join(tmpdir(), "rn-no-binaries-"));
  beforeAll(async () => {
    booted = await bootService();
    busOnly = await booted.harness.spawnServer("service", { env: { LOG_LEVEL: "warn", EXEC_PATH: empty } });
    commandsOnly = await booted.harness.spawnServer("service", { env: { LOG_LEVEL: "warn", SYSTEMD_BUS: "off" } });
    outside = await spawnServer("service", {
      env: {
        LOG_LEVEL: "warn",
        EXEC_PATH: booted.harness.binariesInside(["systemctl", "journalctl"]),
        SYSTEMD_BOOTED_DIR: booted.harness.path("/run/systemd/system"),
      },
    });
  }, 60_000);
  afterAll(async () => {
    try {
      await outside?.stop();
    } finally {
      rmSync(empty, { recursive: true, force: true });
      await booted?.stop();
    }
  });
  const call = (s: SpawnedServer, tool: string, input: Record<string, unknown> = {}) =>
    createClient(s.url).call(tool, { ...input, ...scaledDeadline() });

  it("service_status: the bus with no systemctl to run answers what systemctl says", async () => {
    for (const name of ["rn-sleeper", "rn-broken.service", "rn-logger", "rn-no-such-unit", "roadnerd-test.target"]) {
      const [bus, commands] = await Promise.all([
        call(busOnly, "service_status", { name }),
        call(commandsOnly, "service_status", { name }),
      ]);
      expect(bus, name).toEqual(commands);
    }
    const sleeper = await call(busOnly, "service_status", { name: "rn-sleeper" });
    expect(sleeper).toMatchObject({ loaded: "loaded", active: "active", sub: "running", result: "success" });
    expect(await call(busOnly, "service_status", { name: "rn-no-such-unit" })).toMatchObject({
      loaded: "not-found",
      active: "inactive",
    });
    // A Description with a line break (a transient unit's): what systemctl show prints for it, on both paths.
    const run = booted.harness.run(["systemd-run", "--unit=rn-nl", "--description=line1\nline2", "sleep", "600"]);
    expect(run.status, run.stderr).toBe(0);
    const [nlBus, nlCommands] = await Promise.all([
      call(busOnly, "service_status", { name: "rn-nl" }),
      call(commandsOnly, "service_status", { name: "rn-nl" }),
    ]);
    expect(nlBus).toEqual(nlCommands);
    expect(nlBus).toMatchObject({ description: "[unprintable]", active: "active" });
    // A target has no Result (systemctl show prints none): null on both paths.
    expect(await call(busOnly, "service_status", { name: "roadnerd-test.target" })).toMatchObject({ result: null });
  });

  it("list_failed_units: the bus with no systemctl to run answers what the commands say", async () => {
    const [bus, commands] = await Promise.all([
      call(busOnly, "list_failed_units"),
      call(commandsOnly, "list_failed_units"),
    ]);
    expect(bus).toEqual(commands);
    expect((bus.failed as Array<{ name: string }>).map((u) => u.name)).toContain("rn-broken.service");
  });

  it("journal_tail still needs journalctl: E_NO_BINARY where it cannot be run", async () => {
    await expect(call(busOnly, "journal_tail", { name: "rn-logger" })).rejects.toMatchObject({ code: "E_NO_BINARY" });
  });

  it("a server systemd refuses answers from the commands, and knocks once, not once a call", async () => {
    const before = refusals(booted);
    for (const name of ["rn-sleeper", "rn-broken", "rn-sleeper"]) {
      const [out, commands] = await Promise.all([
        call(outside, "service_status", { name }),
        call(commandsOnly, "service_status", { name }),
      ]);
      expect(out, name).toEqual(commands);
    }
    expect(await call(outside, "list_failed_units")).toEqual(await call(commandsOnly, "list_failed_units"));
    expect(refusals(booted) - before).toBe(1);
  });
});

/** systemd's journal lines for a private-bus connection it refused. */
function refusals(booted: BootedService): number {
  const r = booted.harness.run(["journalctl", "--no-pager", "-o", "cat", "_PID=1"]);
  return r.stdout.split("\n").filter((l) => l.includes("Incoming private connection from unprivileged client")).length;
}
