import { describe, expect, it } from "vitest";
import { isUnitName, MAX_UNIT_NAME, UNIT_NAME, unitName, unitNameField } from "../src/systemd/unit-name.ts";

describe("unit names (systemd's grammar)", () => {
  it("a bare name gets .service; a typed name keeps its type", () => {
    expect(unitName("ssh")).toBe("ssh.service");
    expect(unitName("foo.bar")).toBe("foo.bar.service");
    expect(unitName("cron.timer")).toBe("cron.timer");
    expect(unitName("getty@tty1")).toBe("getty@tty1.service");
    expect(unitName("dev-sda1.device")).toBe("dev-sda1.device");
  });

  it("accepts the names of units that can run, as systemd does (but a leading -)", () => {
    for (const ok of [
      "ssh.service",
      "NetworkManager.service",
      "getty@tty1.service",
      "user@1000.service",
      "container@a@b.service",
      "systemd-fsck@dev-disk-by\\x2duuid-1234.service",
      "sys-devices-platform:serial8250.device",
      "home.mount",
      `${"x".repeat(MAX_UNIT_NAME - 8)}.service`,
    ]) {
      expect(isUnitName(ok), ok).toBe(true);
      expect(unitNameField.safeParse(ok).success, ok).toBe(true);
    }
  });

  it("refuses anything that could be an option, a second unit, a path or a glob", () => {
    for (const bad of [
      "-.mount",
      "--help.service",
      "a b.service",
      "a;b.service",
      "../x.service",
      "a/b.service",
      "ssh*.service",
      "@x.service",
      "foo@.service", // a template: systemctl show refuses it, no unit runs under that name
      ".service",
      "ssh.bogus",
      `${"x".repeat(MAX_UNIT_NAME - 7)}.service`,
    ]) {
      expect(isUnitName(bad), bad).toBe(false);
    }
    // The input field: a bare name whose .service would pass 255 characters is refused too.
    expect(unitNameField.safeParse("x".repeat(248)).success).toBe(false);
    expect(unitNameField.safeParse("x".repeat(247)).success).toBe(true);
  });

  it("the slot pattern is anchored and matches one whole name only", () => {
    expect(UNIT_NAME.source.startsWith("^")).toBe(true);
    expect(UNIT_NAME.source.endsWith("$")).toBe(true);
    expect(UNIT_NAME.test("ssh.service\nx.service")).toBe(false);
  });
});
