import { readFileSync } from "node:fs";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DiagError } from "../src/errors.ts";
import { checkAllowed, createExec, slot } from "../src/exec.ts";

let dir: string;

async function fake(name: string, script: string): Promise<void> {
  const path = join(dir, name);
  await writeFile(path, `#!/bin/sh\n${script}\n`);
  await chmod(path, 0o755);
}

/** Running (not gone, not a zombie waiting for a reaper that is not ours). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
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
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("checkAllowed", () => {
  const allow = {
    ip: [
      ["-j", "addr", "show"],
      ["link", "show", slot("ifname", /^[a-z0-9]{1,15}$/)],
    ],
  };

  it("accepts an exact allowlisted shape", () => {
    expect(() => checkAllowed(allow, "ip", ["-j", "addr", "show"])).not.toThrow();
    expect(() => checkAllowed(allow, "ip", ["link", "show", "eth0"])).not.toThrow();
  });

  it("refuses other binaries, other shapes and option-looking slot values", () => {
    const code = (fn: () => void) => {
      try {
        fn();
        return "none";
      } catch (e) {
        return (e as DiagError).code;
      }
    };
    expect(code(() => checkAllowed(allow, "rm", ["-rf", "/"]))).toBe("E_UNSUPPORTED");
    expect(code(() => checkAllowed(allow, "ip", ["-j", "addr", "flush"]))).toBe("E_UNSUPPORTED");
    expect(code(() => checkAllowed(allow, "ip", ["link", "show", "-all"]))).toBe("E_UNSUPPORTED");
    expect(code(() => checkAllowed(allow, "ip", ["link", "show", "eth0", "extra"]))).toBe("E_UNSUPPORTED");
    expect(code(() => checkAllowed(allow, "toString", []))).toBe("E_UNSUPPORTED");
  });
});

describe("createExec", () => {
  const exec = () =>
    createExec(
      {
        echoargs: [["--fixed", slot("value", /^[a-z ;$()]+$/)]],
        hang: [[]],
        flood: [[]],
        fail: [[]],
        missing: [[]],
      },
      `${dir}:/usr/bin:/bin`,
    );

  it("passes argv without a shell, with LC_ALL=C and a scrubbed environment", async () => {
    process.env.SECRET = "s3cret";
    const r = await exec()("echoargs", ["--fixed", "a; $(id)"], { timeoutMs: 2000 });
    delete process.env.SECRET;
    expect(r.stdout).toBe("--fixed\na; $(id)\nLC_ALL=C HOME=unset SECRET=unset\n");
    expect(r.exitCode).toBe(0);
  });

  it("reports a non-zero exit as data, not as an error", async () => {
    const r = await exec()("fail", [], { timeoutMs: 2000 });
    expect(r.exitCode).toBe(3);
    expect(r.stderr.trim()).toBe("oops");
  });

  it("maps a missing binary to E_NO_BINARY naming it", async () => {
    await expect(exec()("missing", [], { timeoutMs: 2000 })).rejects.toMatchObject({
      code: "E_NO_BINARY",
      message: expect.stringContaining("missing"),
    });
  });

  it("kills the whole process group on timeout, grandchildren included", async () => {
    const err = await exec()("hang", [], { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DiagError);
    expect((err as DiagError).code).toBe("E_TIMEOUT");
    const grandchild = Number((await readFile(join(dir, "grandchild.pid"), "utf8")).trim());
    expect(grandchild).toBeGreaterThan(0);
    // SIGKILL follows SIGTERM after a short grace; give the kernel a moment to reap.
    await new Promise((r) => setTimeout(r, 400));
    expect(alive(grandchild)).toBe(false);
  });

  it("aborts when the caller's signal fires", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await expect(exec()("hang", [], { timeoutMs: 10_000, signal: controller.signal })).rejects.toMatchObject({
      code: "E_TIMEOUT",
    });
  });

  it("caps output and says it was truncated", async () => {
    const r = await exec()("flood", [], { timeoutMs: 5000, maxBytes: 4096 });
    expect(r.truncated).toBe(true);
    expect(r.stdout.length).toBeLessThanOrEqual(4096);
    expect(r.stdout.startsWith("roadnerd\n")).toBe(true);
  });

  it("refuses before spawning when the shape is not allowlisted", async () => {
    await expect(exec()("echoargs", ["--other", "x"], { timeoutMs: 2000 })).rejects.toMatchObject({
      code: "E_UNSUPPORTED",
    });
    await expect(exec()("echoargs", ["--fixed", "-x"], { timeoutMs: 2000 })).rejects.toMatchObject({
      code: "E_UNSUPPORTED",
    });
  });
});
