/**
 * The booted-systemd harness (packages/testkit) itself: systemd really is PID 1 of its own namespaces, the
 * host's root is untouched (its /tmp keeps its files, no systemd runtime directory appears here), and stop()
 * leaves nothing behind: no process, no mount, no cgroup, no directory.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isLive } from "@roadnerd/conventions/testing";
import { bootSystemd, HARNESS_TARGET, REPO_ROOT } from "@roadnerd/testkit";
import { describe, expect, it, onTestFinished } from "vitest";
import { SLEEPER } from "./helpers/test-units.ts";

const harnessCgroups = () =>
  ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"].flatMap((d) =>
    existsSync(d) ? readdirSync(d).filter((e) => e.startsWith(`roadnerd-harness-${process.pid}-`)) : [],
  );
const CGROUP2 = existsSync("/sys/fs/cgroup/unified/cgroup.procs") ? "/sys/fs/cgroup/unified" : "/sys/fs/cgroup";
// This process's own harness directories: other test files may boot theirs meanwhile.
const harnessDirs = () => readdirSync("/tmp").filter((e) => e.startsWith(`rn-systemd-${process.pid}-`));

describe("bootSystemd", () => {
  it("boots systemd as PID 1 over an overlay, and stop() removes every trace", async () => {
    const marker = `/tmp/rn-harness-marker-${process.pid}`;
    writeFileSync(marker, "still here");
    onTestFinished(() => rmSync(marker, { force: true }));
    const dirsBefore = harnessDirs();
    const harness = await bootSystemd({ units: [SLEEPER] });
    try {
      expect(readFileSync(`/proc/${harness.pid}/comm`, "utf8").trim()).toBe("systemd");
      // PID 1 inside its own PID namespace.
      expect(readFileSync(`/proc/${harness.pid}/status`, "utf8")).toMatch(/^NSpid:\s+\d+\s+1$/m);
      expect(harness.run(["cat", "/proc/1/comm"]).stdout.trim()).toBe("systemd");
      expect(harness.systemctl("is-active", HARNESS_TARGET, SLEEPER.name).split("\n").filter(Boolean)).toEqual([
        "active",
        "active",
      ]);
      expect(existsSync(harness.path("/run/systemd/system"))).toBe(true);
      // The host is untouched: no systemd runtime here, our /tmp as it was, its mounts not visible.
      expect(existsSync("/run/systemd/system")).toBe(false);
      expect(readFileSync(marker, "utf8")).toBe("still here");
      // Inside, the host's files show through the overlay: removing one there leaves the host's copy alone.
      expect(harness.run(["rm", marker]).status).toBe(0);
      expect(harness.run(["test", "-e", marker]).status).toBe(1);
      expect(readFileSync(marker, "utf8")).toBe("still here");
      // The checkout is there, at its own path, read-only.
      expect(harness.run(["test", "-f", `${REPO_ROOT}package.json`]).status).toBe(0);
      expect(harness.run(["touch", `${REPO_ROOT}rn-harness-write-test`]).status).not.toBe(0);
      expect(existsSync(`${REPO_ROOT}rn-harness-write-test`)).toBe(false);
      expect(readFileSync("/proc/self/mountinfo", "utf8")).not.toContain("roadnerd-systemd");
      expect(harnessCgroups()).toHaveLength(1);
    } finally {
      await harness.stop();
    }
    expect(isLive(harness.pid)).toBe(false);
    expect(harnessCgroups()).toEqual([]);
    expect(harnessDirs()).toEqual(dirsBefore);
    expect(readFileSync(marker, "utf8")).toBe("still here");
    await harness.stop();
  }, 60_000);

  it("a test process killed outright (SIGKILL, no hook runs) takes its systemd with it", async () => {
    const child = spawn(
      process.execPath,
      [
        join(REPO_ROOT, "node_modules/vitest/vitest.mjs"),
        "run",
        "--config",
        join(import.meta.dirname, "helpers/boot-and-wait.config.ts"),
      ],
      { cwd: REPO_ROOT, env: process.env, stdio: ["ignore", "pipe", "pipe"], detached: true },
    );
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    try {
      for (let i = 0; i < 300 && !/BOOTED \d+/.test(out); i++) await new Promise((r) => setTimeout(r, 100));
      const pid = Number(/BOOTED (\d+)/.exec(out)?.[1]);
      expect(isLive(pid), out.slice(-2000)).toBe(true);
      // The whole child vitest, its worker included: nothing of ours gets to run.
      process.kill(-(child.pid as number), "SIGKILL");
      for (let i = 0; i < 50 && isLive(pid); i++) await new Promise((r) => setTimeout(r, 100));
      expect(isLive(pid)).toBe(false);
    } finally {
      try {
        process.kill(-(child.pid as number), "SIGKILL");
      } catch {}
    }
    // What it left (an empty cgroup, an empty directory) goes at the next boot.
    const next = await bootSystemd();
    await next.stop();
    const ofDead = (names: string[], prefix: string) =>
      names.filter((n) => n.startsWith(prefix) && !isLive(Number(n.slice(prefix.length).split("-")[0])));
    expect(ofDead(readdirSync("/tmp"), "rn-systemd-")).toEqual([]);
    expect(ofDead(readdirSync(CGROUP2), "roadnerd-harness-")).toEqual([]);
  }, 60_000);

  it("refuses a bad unit name before anything is started", async () => {
    await expect(bootSystemd({ units: [{ name: "../x.service", body: "" }] })).rejects.toThrow(/bad unit name/);
    expect(harnessCgroups()).toEqual([]);
  });
});
