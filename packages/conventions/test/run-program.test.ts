/** runProgram: the kernel's spawn for programs the orchestrator chose — output, failure, deadline, cap, no leftovers. */
import { describe, expect, it } from "vitest";
import { liveProcessGroups } from "../src/exec/exec.ts";
import { runProgram } from "../src/process/run-program.ts";

const env = { PATH: "/usr/bin:/bin" };

describe("runProgram", () => {
  it("returns stdout and stderr of a program that exits 0, with only the given environment", async () => {
    const r = await runProgram(["/bin/sh", "-c", "echo out; echo err >&2; echo home=$HOME"], {
      env,
      timeoutMs: 30_000,
    });
    expect(r).toEqual({ stdout: "out\nhome=\n", stderr: "err\n" });
  });

  it("a non-zero exit rejects with its stderr kept", async () => {
    await expect(
      runProgram(["/bin/sh", "-c", "echo why >&2; exit 3"], { env, timeoutMs: 30_000 }),
    ).rejects.toMatchObject({ message: "exited with 3", stderr: "why\n" });
  });

  it("the deadline kills the whole group, a grandchild included", async () => {
    const before = liveProcessGroups();
    await expect(
      runProgram(["/bin/sh", "-c", "sleep 60 & echo $!; wait"], { env, timeoutMs: 300 }),
    ).rejects.toMatchObject({ message: "timed out after 300 ms" });
    expect(liveProcessGroups()).toBe(before);
  });

  it("output past the cap stops the program", async () => {
    await expect(
      runProgram(["/bin/sh", "-c", "yes roadnerd"], { env, timeoutMs: 30_000, maxBytes: 4096 }),
    ).rejects.toMatchObject({ message: "printed more than 4096 bytes" });
  });
});
