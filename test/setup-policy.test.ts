/**
 * scripts/setup.sh's policy-rc.d around the tests' packages (stop 33's review): in place during their install
 * only, gone however the install ends (a failure, a signal), a leftover of a run cut short recognised by its mark
 * and removed, and a policy the machine has of its own left alone. Run by sourcing the script (it then only
 * defines its functions), with its POLICY pointed into a temp dir and apt-get's part played by a function that
 * records what it saw: the script's logic runs for real; no package is installed.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const SETUP = new URL("../scripts/setup.sh", import.meta.url).pathname;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Source setup.sh, point POLICY into a temp dir, define apt_install as `aptBody`, then run `then`. */
function run(
  aptBody: string,
  then: string,
  before = "",
): { status: number | null; out: string; policy: string; calls: string } {
  const dir = mkdtempSync(join(tmpdir(), "rn-setup-policy-"));
  dirs.push(dir);
  const policy = join(dir, "policy-rc.d");
  const script = `set -euo pipefail
. ${JSON.stringify(SETUP)}
POLICY=${JSON.stringify(policy)}
${before}
apt_install() { ${aptBody}; }
systemctl() { echo "systemctl $*" >> ${JSON.stringify(join(dir, "calls"))}; }
${then}`;
  const r = spawnSync("bash", ["-c", script], { encoding: "utf8" });
  const calls = existsSync(join(dir, "calls")) ? readFileSync(join(dir, "calls"), "utf8") : "";
  return { status: r.status, out: r.stdout + r.stderr, policy, calls };
}

describe("setup.sh: the tests' packages install without starting their services", () => {
  it("puts its policy in place for the install only, then disables the units", () => {
    const r = run(
      `if [ -x "$POLICY" ] && grep -q '^exit 101$' "$POLICY"; then echo "policy during install"; fi`,
      "install_test_packages prometheus prometheus-blackbox-exporter git",
    );
    expect(r.status).toBe(0);
    expect(r.out).toContain("policy during install");
    expect(existsSync(r.policy)).toBe(false);
    expect(r.calls).toBe(
      "systemctl disable --now --quiet prometheus.service\nsystemctl disable --now --quiet prometheus-blackbox-exporter.service\n",
    );
    expect(r.out).toContain("prometheus.service installed for the tests, not started, not enabled");
  });

  it("removes its policy when the install fails or the run is interrupted", () => {
    const failed = run("return 100", "install_test_packages prometheus");
    expect(failed.status).toBe(100);
    expect(existsSync(failed.policy)).toBe(false);
    // A package configured before the failure does not start at the next boot either.
    expect(failed.calls).toBe("systemctl disable --now --quiet prometheus.service\n");
    const interrupted = run("kill -INT $$; sleep 5", "install_test_packages prometheus; echo 'went on'");
    expect(interrupted.status).toBe(130);
    expect(interrupted.out).not.toContain("went on");
    expect(existsSync(interrupted.policy)).toBe(false);
  });

  it("removes a leftover of its own (by its mark) and leaves the machine's own policy alone", () => {
    const leftover = run(
      `[ -e "$POLICY" ] && echo "policy during install"`,
      "install_test_packages prometheus",
      `printf '#!/bin/sh\\n%s\\nexit 101\\n' "$POLICY_MARK" > "$POLICY"`,
    );
    expect(leftover.status).toBe(0);
    expect(existsSync(leftover.policy)).toBe(false);
    const own = run(
      "true",
      "install_test_packages prometheus",
      `printf '#!/bin/sh\\n# the admin\\nexit 0\\n' > "$POLICY"`,
    );
    expect(own.status).toBe(0);
    expect(readFileSync(own.policy, "utf8")).toContain("# the admin");
  });

  it("writes nothing through a link in the policy's place", () => {
    const dir = mkdtempSync(join(tmpdir(), "rn-setup-target-"));
    dirs.push(dir);
    const target = join(dir, "target");
    const r = run("true", "install_test_packages prometheus", `ln -s ${JSON.stringify(target)} "$POLICY"`);
    expect(r.status).toBe(0);
    expect(existsSync(target)).toBe(false);
  });
});
