import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { buildArgv, checkAllowed, command, slot } from "../src/define/command.ts";
import { DiagError } from "../src/errors/errors.ts";
import { createExec, KILL_GRACE_MS } from "../src/exec/exec.ts";
import { isLive } from "../src/testing/procfs.ts";

let dir: string;

async function fake(name: string, script: string): Promise<void> {
  const path = join(dir, name);
  await writeFile(path, `#!/bin/sh\n${script}\n`);
  await chmod(path, 0o755);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rn-exec-"));
  await fake(
    "echoargs",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell script, not a template
    'for a in "$@"; do echo "$a"; done; echo "LC_ALL=$LC_ALL HOME=${HOME:-unset} SECRET=${SECRET:-unset}"',
  );
  // A grandchild that keeps stdout open: execa's own timeout would wait for it.
  await fake("hang", `sleep 30 &\necho $! > "${dir}/grandchild.pid"\nsleep 30`);
  await fake("flood", "yes roadnerd");
  await fake("fail", "echo oops >&2; exit 3");
  await fake("killed", "kill -9 $$");
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  vi.useRealTimers();
});
const realSetTimeout = globalThis.setTimeout;
const realDelay = (ms: number) => new Promise((r) => realSetTimeout(r, ms));

const ipAddr = command("ip", ["-j", "addr", "show"]);
const ipLink = command("ip", ["link", "show", slot("ifname", /^[a-z0-9]{1,15}$/)]);
const unitProp = command("systemctl", ["show", slot("unit", /^[a-z.]+$/, { prefix: "--unit=" })]);

describe("checkAllowed", () => {
  const allowed = [ipAddr, ipLink, unitProp];
  const code = (fn: () => void) => {
    try {
      fn();
      return "none";
    } catch (e) {
      return (e as DiagError).code;
    }
  };

  it("accepts an argv that fits a declared template exactly", () => {
    expect(() => checkAllowed(allowed, "ip", ["-j", "addr", "show"])).not.toThrow();
    expect(() => checkAllowed(allowed, "ip", ["link", "show", "eth0"])).not.toThrow();
    expect(() => checkAllowed(allowed, "systemctl", ["show", "--unit=ssh.service"])).not.toThrow();
  });

  it("refuses other binaries, other shapes and option-looking slot values", () => {
    expect(code(() => checkAllowed(allowed, "rm", ["-rf", "/"]))).toBe("E_UNSUPPORTED");
    expect(code(() => checkAllowed(allowed, "ip", ["-j", "addr", "flush"]))).toBe("E_UNSUPPORTED");
    expect(code(() => checkAllowed(allowed, "ip", ["link", "show", "-all"]))).toBe("E_UNSUPPORTED");
    expect(code(() => checkAllowed(allowed, "ip", ["link", "show", "eth0", "extra"]))).toBe("E_UNSUPPORTED");
    expect(code(() => checkAllowed(allowed, "systemctl", ["show", "--unit=-x"]))).toBe("E_UNSUPPORTED");
    expect(code(() => checkAllowed(allowed, "systemctl", ["show", "--user"]))).toBe("E_UNSUPPORTED");
    expect(code(() => checkAllowed(allowed, "toString", []))).toBe("E_UNSUPPORTED");
  });

  it("builds argv from a template and refuses a value that does not fit its slot", () => {
    expect(buildArgv(ipLink, { ifname: "eth0" })).toEqual(["link", "show", "eth0"]);
    expect(buildArgv(unitProp, { unit: "ssh.service" })).toEqual(["show", "--unit=ssh.service"]);
    for (const bad of ["-all", "eth0 up", "eth0\n", "ETH0", ""]) {
      expect(code(() => buildArgv(ipLink, { ifname: bad }))).toBe("E_INVALID_INPUT");
    }
  });

  it("refuses an unanchored slot pattern and a binary given as a path", () => {
    expect(() => slot("x", /[a-z]+/)).toThrow(/anchored/);
    expect(() => command("/usr/bin/ip", [])).toThrow(/bare name/);
  });
});

describe("createExec", () => {
  const echoargs = command("echoargs", ["--fixed", slot("value", /^[a-z ;$()]+$/)]);
  const hang = command("hang", []);
  const flood = command("flood", []);
  const fail = command("fail", []);
  const missing = command("missing", []);
  const killed = command("killed", []);
  const exec = () => createExec([echoargs, hang, flood, fail, missing, killed], `${dir}:/usr/bin:/bin`);

  it("a program ended by a signal from elsewhere is E_EXEC_FAILED naming the signal, not a bug of ours", async () => {
    await expect(exec()(killed, undefined, { timeoutMs: 2000 })).rejects.toMatchObject({
      code: "E_EXEC_FAILED",
      message: "killed was ended by SIGKILL before it answered",
    });
  });

  it("passes argv without a shell, with LC_ALL=C and a scrubbed environment", async () => {
    process.env.SECRET = "s3cret";
    const r = await exec()(echoargs, { value: "a; $(id)" }, { timeoutMs: 2000 });
    delete process.env.SECRET;
    expect(r.stdout).toBe("--fixed\na; $(id)\nLC_ALL=C HOME=unset SECRET=unset\n");
    expect(r.exitCode).toBe(0);
  });

  it("reports a non-zero exit as data, not as an error", async () => {
    const r = await exec()(fail, undefined, { timeoutMs: 2000 });
    expect(r.exitCode).toBe(3);
    expect(r.stderr.trim()).toBe("oops");
  });

  it("maps a missing binary to E_NO_BINARY naming it", async () => {
    await expect(exec()(missing, undefined, { timeoutMs: 2000 })).rejects.toMatchObject({
      code: "E_NO_BINARY",
      message: expect.stringContaining("missing"),
    });
  });

  it("kills the whole process group on timeout, grandchildren included", async () => {
    // The deadline on the test's clock: it comes once the program has started its grandchild, however long a
    // loaded machine took to get there. The processes are real.
    const pidFile = join(dir, "grandchild.pid");
    await rm(pidFile, { force: true });
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const ended = exec()(hang, undefined, { timeoutMs: 300 }).catch((e: unknown) => e);
    let grandchild = 0;
    for (let i = 0; i < 1000 && !(grandchild > 0); i++) {
      await realDelay(10);
      grandchild = Number((await readFile(pidFile, "utf8").catch(() => "")).trim());
    }
    expect(grandchild).toBeGreaterThan(0);
    // The deadline, then the grace after which SIGKILL follows SIGTERM.
    await vi.advanceTimersByTimeAsync(300 + KILL_GRACE_MS);
    const err = await ended;
    expect(err).toBeInstanceOf(DiagError);
    expect((err as DiagError).code).toBe("E_TIMEOUT");
    // The kernel reaps it in its own time (bounded wait).
    for (let i = 0; i < 200 && isLive(grandchild); i++) await realDelay(50);
    expect(isLive(grandchild)).toBe(false);
  });

  it("aborts when the caller's signal fires", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await expect(exec()(hang, undefined, { timeoutMs: 10_000, signal: controller.signal })).rejects.toMatchObject({
      code: "E_TIMEOUT",
    });
  });

  it("caps output and says it was truncated", async () => {
    const r = await exec()(flood, undefined, { timeoutMs: 5000, maxBytes: 4096 });
    expect(r.truncated).toBe(true);
    expect(r.stdout.length).toBeLessThanOrEqual(4096);
    expect(r.stdout.startsWith("roadnerd\n")).toBe(true);
  });

  it("refuses before spawning: an undeclared command, or a value that does not fit", async () => {
    const other = command("echoargs", ["--other", slot("value", /^x$/)]);
    await expect(exec()(other, { value: "x" }, { timeoutMs: 2000 })).rejects.toMatchObject({
      code: "E_UNSUPPORTED",
    });
    await expect(exec()(echoargs, { value: "-x" }, { timeoutMs: 2000 })).rejects.toMatchObject({
      code: "E_INVALID_INPUT",
    });
  });
});
