/**
 * Read-only by construction: the server's allowlist (the union of its tools' and stream's command templates)
 * holds only read verbs of systemctl and journalctl. Every mutating verb is refused with E_UNSUPPORTED by the
 * kernel's checkAllowed before any process exists — checked here against the real templates, and through the
 * exec itself with binaries that would record a run.
 */
import { command } from "@roadnerd/conventions";
import { checkAllowed, liveProcessGroups, spawnLines, testExec } from "@roadnerd/conventions/testing";
import { describe, expect, it } from "vitest";
import { server } from "../src/server.ts";
import { fakeSystemd } from "./helpers/no-systemd.ts";

const commands = [...server.tools.flatMap((t) => t.commands), ...server.streams.flatMap((s) => s.commands)];

const MUTATING_SYSTEMCTL = [
  ["start", "ssh.service"],
  ["stop", "ssh.service"],
  ["restart", "ssh.service"],
  ["try-restart", "ssh.service"],
  ["reload", "ssh.service"],
  ["reload-or-restart", "ssh.service"],
  ["enable", "ssh.service"],
  ["enable", "--now", "ssh.service"],
  ["disable", "ssh.service"],
  ["mask", "ssh.service"],
  ["unmask", "ssh.service"],
  ["kill", "ssh.service"],
  ["reset-failed"],
  ["isolate", "rescue.target"],
  ["set-property", "ssh.service", "CPUQuota=1%"],
  ["edit", "ssh.service"],
  ["daemon-reload"],
  ["daemon-reexec"],
  ["link", "/tmp/x.service"],
  ["set-environment", "A=b"],
  ["reboot"],
  ["poweroff"],
  ["halt"],
  ["kexec"],
  ["default"],
  ["rescue"],
  ["emergency"],
  ["switch-root", "/"],
  // A read verb with an option that writes, or shaped unlike its template.
  ["show", "--property=Id", "ssh.service"],
  ["show", "--property=Id,LoadState", "--", "ssh.service", "cron.service"],
  ["show", "--user"],
  ["list-units", "--state=failed", "--output=json", "--root=/"],
  ["status", "ssh.service"],
];

const MUTATING_JOURNALCTL = [
  ["--vacuum-size=1"],
  ["--vacuum-time=1s"],
  ["--rotate"],
  ["--flush"],
  ["--sync"],
  ["--relinquish-var"],
  ["--smart-relinquish-var"],
  ["--setup-keys"],
  ["--update-catalog"],
  ["--unit=ssh.service", "--lines=10", "--output=json", "--output-fields=MESSAGE", "--no-pager", "--quiet"],
  ["--unit=ssh.service", "--follow", "--lines=0", "--output=export", "--no-pager", "--quiet"],
];

describe("the allowlist holds only read verbs", () => {
  it("every template's verb is show or list-units (systemctl) or a read of one unit (journalctl)", () => {
    expect(commands.map((c) => c.binary).sort()).toEqual([
      "journalctl",
      "journalctl",
      "systemctl",
      "systemctl",
      "systemctl",
    ]);
    for (const c of commands) {
      const fixed = c.args.filter((a): a is string => typeof a === "string");
      if (c.binary === "systemctl") expect(["show", "list-units"]).toContain(fixed[0]);
      else {
        expect(fixed).toContain("--output=json");
        expect(fixed.some((a) => /^--(vacuum|rotate|flush|sync|relinquish|setup-keys|update-catalog)/.test(a))).toBe(
          false,
        );
      }
    }
  });

  it.each(MUTATING_SYSTEMCTL)("systemctl %s … is E_UNSUPPORTED", (...args) => {
    expect(() => checkAllowed(commands, "systemctl", args)).toThrow(expect.objectContaining({ code: "E_UNSUPPORTED" }));
  });

  it.each(MUTATING_JOURNALCTL)("journalctl %s … is E_UNSUPPORTED", (...args) => {
    expect(() => checkAllowed(commands, "journalctl", args)).toThrow(
      expect.objectContaining({ code: "E_UNSUPPORTED" }),
    );
  });

  it("no other binary at all", () => {
    for (const b of ["sh", "bash", "busctl", "loginctl", "systemd-run", "kill"]) {
      expect(() => checkAllowed(commands, b, [])).toThrow(expect.objectContaining({ code: "E_UNSUPPORTED" }));
    }
  });

  it("through the exec itself: refused before any process exists", async () => {
    const fake = await fakeSystemd();
    try {
      const path = fake.env.EXEC_PATH as string;
      // A command the tools did not declare is refused by identity, whatever its shape.
      const exec = testExec(commands, path);
      await expect(
        exec(command("systemctl", ["restart", "ssh.service"]), undefined, { timeoutMs: 1000 }),
      ).rejects.toMatchObject({
        code: "E_UNSUPPORTED",
      });
      // The line-streaming spawn checks the argv against the same templates.
      for (const args of MUTATING_SYSTEMCTL) {
        await expect(spawnLines(commands, path, "systemctl", args, { timeoutMs: 1000 })).rejects.toMatchObject({
          code: "E_UNSUPPORTED",
        });
      }
      expect(await fake.runs()).toEqual([]);
      expect(liveProcessGroups()).toBe(0);
    } finally {
      await fake.cleanup();
    }
  });
});
