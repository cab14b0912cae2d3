/**
 * spawnNodeChild (ADR 0059): a Node helper on a function's source with an IPC channel, in its own process
 * group, tracked so it dies with this process, tied by setpriv to the thread that forked it (ADR 0051), and
 * gone once ended.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { liveProcessGroups, spawnNodeChild } from "../src/exec/exec.ts";
import { deathTieWrapper } from "../src/process/death-tie.ts";
import { isLive } from "../src/testing/procfs.ts";

/** Answers each message doubled; exits when the channel closes. */
function echoMain(): void {
  process.on("message", (m) => process.send?.({ twice: Number(m) * 2, cwd: process.cwd(), env: process.env.PATH }));
  process.on("disconnect", () => process.exit(0));
}

const until = async (ok: () => boolean, ms = 10_000) => {
  for (const end = performance.now() + ms; !ok() && performance.now() < end; )
    await new Promise((r) => setTimeout(r, 20));
  return ok();
};

describe("spawnNodeChild", () => {
  it("talks over IPC, in its own group with the scrubbed environment, tracked until ended", async () => {
    const before = liveProcessGroups();
    const { child, end } = spawnNodeChild(`(${echoMain.toString()})()`);
    const pid = child.pid as number;
    expect(liveProcessGroups()).toBe(before + 1);
    const answer = await new Promise((resolve) => {
      child.once("message", resolve);
      child.send(21);
    });
    expect(answer).toMatchObject({ twice: 42, env: "/usr/bin:/bin" });
    // Its own process group (a group kill reaches nothing of ours), as every child of the kernel.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    expect(Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2])).toBe(pid);
    if (deathTieWrapper()) {
      // setpriv exec'd node in place (same pid): it dies with the thread that forked it (ADR 0051).
      expect(readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0]).toBe(process.execPath);
    }
    end();
    expect(liveProcessGroups()).toBe(before);
    expect(await until(() => !isLive(pid))).toBe(true);
  });

  it.skipIf(!deathTieWrapper())(
    "dies with the process that started it, even ignoring the channel's close",
    async () => {
      // A parent (plain node on the kernel's source) starts a child that ignores "disconnect" and would run on;
      // SIGKILLing the parent runs no exit hook: only the death signal (setpriv, ADR 0051) can end the child.
      const exec = fileURLToPath(new URL("../src/exec/exec.ts", import.meta.url));
      const script = `import { spawnNodeChild } from ${JSON.stringify(exec)};
const { child } = spawnNodeChild('process.on("disconnect", () => {}); setInterval(() => {}, 1000); process.send("up");');
child.once("message", () => process.stdout.write(child.pid + "\\n"));`;
      const parent = spawn(process.execPath, ["--input-type=module", "-e", script], {
        stdio: ["ignore", "pipe", "ignore"],
      });
      const pid = await new Promise<number>((resolve, reject) => {
        parent.stdout?.once("data", (d: Buffer) => resolve(Number(d.toString().trim())));
        parent.once("exit", () => reject(new Error("the parent exited before its child was up")));
      });
      expect(isLive(pid)).toBe(true);
      process.kill(parent.pid as number, "SIGKILL");
      const gone = await until(() => !isLive(pid));
      if (!gone) process.kill(pid, "SIGKILL");
      expect(gone).toBe(true);
    },
  );

  it("ends itself when this side closes the channel", async () => {
    const { child, end } = spawnNodeChild(`(${echoMain.toString()})()`);
    const exited = new Promise((r) => child.once("exit", r));
    await new Promise((resolve) => {
      child.once("message", resolve);
      child.send(1);
    });
    child.disconnect();
    await exited;
    end();
  });
});
