/** The systemd unit from recorded /proc/<pid>/cgroup files: v2, v1, hybrid, user managers, scopes, none. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseCgroupUnit, systemdCgroupPath } from "../../src/proc/cgroup-unit.ts";

const fixture = (name: string) => readFileSync(new URL(`../fixtures/cgroup/${name}.txt`, import.meta.url), "utf8");

describe("parseCgroupUnit", () => {
  it.each([
    ["v2-system-service", "jenkins.service", null],
    ["hybrid", "nginx.service", null],
    ["v1-only", "postgresql@15-main.service", null],
    ["hybrid-empty-v2", "redis-server.service", null],
    ["user-service", "syncthing.service", 1000],
    ["user-app-scope", "vte-spawn-1a2b.scope", 1000],
    ["user-manager", "user@1000.service", null],
    ["session-scope", "session-3.scope", null],
    ["docker-scope", "docker-0123456789abcdef.scope", null],
    ["templated", "getty@tty1.service", null],
    ["init", "init.scope", null],
    ["container-root", null, null],
    // This machine: systemd is not PID 1, every hierarchy at its root, one v1 memory cgroup of a sandbox.
    ["this-machine", null, null],
  ])("%s → unit %s, user unit of %s", (name, unit, userUnitOf) => {
    expect(parseCgroupUnit(fixture(name))).toEqual({ unit, user_unit_of: userUnitOf });
  });

  it("reads the systemd path from v2, or from name=systemd when v2 is only the root", () => {
    expect(systemdCgroupPath(fixture("v1-only"))).toBe(
      "/system.slice/system-postgresql.slice/postgresql@15-main.service",
    );
    expect(systemdCgroupPath(fixture("hybrid-empty-v2"))).toBe("/system.slice/redis-server.service");
    expect(systemdCgroupPath(fixture("this-machine"))).toBe("/");
    expect(systemdCgroupPath("")).toBeNull();
    expect(parseCgroupUnit("")).toEqual({ unit: null, user_unit_of: null });
  });

  it("reads the test process's live cgroup: no unit unless systemd is PID 1 (it is not on this machine)", () => {
    const live = parseCgroupUnit(readFileSync("/proc/self/cgroup", "utf8"));
    if (readFileSync("/proc/1/comm", "utf8").trim() === "systemd") expect(live.unit).toMatch(/\.(service|scope)$/);
    else expect(live).toEqual({ unit: null, user_unit_of: null });
  });
});
