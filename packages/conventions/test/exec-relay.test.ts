/**
 * The spawn helper process (ADR 0042, 0068): started by the first spawn, not at import, ended when idle; a helper that
 * dies fails the runs it held and leaves no process behind, and the next spawn starts another (so does a helper
 * left stopped); a run in flight keeps the process alive and an idle helper does not.
 */
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { command } from "../src/define/command.ts";
import { createExec, liveProcessGroups, spawnGroup, spawnLines } from "../src/exec/exec.ts";
import {
  HELPER_STOPPED_MS,
  SPAWN_HELPER_IDLE_MS,
  SPAWN_HELPER_MARK,
  setHelperStoppedMs,
  spawnHelperStarted,
  spawnsInFlight,
  stopSpawnHelper,
} from "../src/exec/exec-relay.ts";
import { deathTieWrapper } from "../src/process/death-tie.ts";
import { isLive, pidsWhere } from "../src/testing/procfs.ts";

let dir: string;
const realSetTimeout = globalThis.setTimeout;
const realDelay = (ms: number) => new Promise((r) => realSetTimeout(r, ms));

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rn-relay-"));
  await writeFile(join(dir, "holdpid"), `#!/bin/sh\necho $$ > "${dir}/held.pid"\nsleep 30\n`);
  await chmod(join(dir, "holdpid"), 0o755);
  await writeFile(join(dir, "printargs"), `#!/bin/sh\nprintf '%s\\n' "$0" "$@"\n`);
  await chmod(join(dir, "printargs"), 0o755);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  vi.useRealTimers();
});

const echo = command("echo", ["relayed"]);
const holdpid = command("holdpid", []);
const printargs = command("printargs", ["--reuid=0", "--", "-e"]);
/** Its own argv as the kernel has it: what `ps` and /proc show of a child. */
const ownArgv = command("sh", ["-c", `tr '\\0' '\\n' </proc/$$/cmdline`]);
/** A process's parent, from /proc (0 when it is gone). */
/** The pid a run wrote to `file` (holdpid), once it is there (10 s at most; 0 if never). */
async function pidFrom(file: string): Promise<number> {
  let pid = 0;
  for (let i = 0; i < 1000 && !(pid > 0); i++) {
    await realDelay(10);
    pid = Number((await readFile(file, "utf8").catch(() => "")).trim());
  }
  return pid;
}

/** Spawn helpers whose parent is this process. */
const ourHelpers = () =>
  pidsWhere("cmdline", (c) => c.includes(SPAWN_HELPER_MARK)).filter((p) => readParent(p) === process.pid);

function readParent(pid: number): number {
  try {
    return Number(/^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}
const exec = () => createExec([echo, holdpid, printargs, ownArgv], `${dir}:/usr/bin:/bin`);

describe("the spawn helper", () => {
  it("starts on the first spawn, not when the kernel is imported", async () => {
    expect(spawnHelperStarted()).toBe(false);
    const r = await exec()(echo, undefined, { timeoutMs: 10_000 });
    expect(r).toMatchObject({ stdout: "relayed\n", exitCode: 0, truncated: false });
    expect(spawnHelperStarted()).toBe(true);
  });

  it("a helper that dies fails its runs with E_EXEC_FAILED, kills their groups, and the next spawn gets a new one", async () => {
    const pidFile = join(dir, "held.pid");
    await rm(pidFile, { force: true });
    const held = exec()(holdpid, undefined, { timeoutMs: 60_000 }).catch((e: unknown) => e);
    const pid = await pidFrom(pidFile);
    expect(pid).toBeGreaterThan(0);
    await stopSpawnHelper();
    expect(await held).toMatchObject({ code: "E_EXEC_FAILED" });
    expect(liveProcessGroups()).toBe(0);
    for (let i = 0; i < 200 && isLive(pid); i++) await realDelay(50);
    expect(isLive(pid)).toBe(false);
    expect(spawnHelperStarted()).toBe(false);
    const r = await exec()(echo, undefined, { timeoutMs: 10_000 });
    expect(r.stdout).toBe("relayed\n");
  });

  it("a call whose deadline passes before its process exists answers then, and the process dies as it starts", async () => {
    // The deadline on the test's clock, passed before the helper can have said `started`: as when the helper is
    // held up by an earlier spawn (a child stopped between fork and exec).
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const call = exec()(holdpid, undefined, { timeoutMs: 1000 }).catch((e: unknown) => e);
    vi.advanceTimersByTime(1000);
    expect(await call).toMatchObject({ code: "E_TIMEOUT" });
    vi.useRealTimers();
    // Its outcome still comes back (killed at start, not after its 30 s sleep), and nothing is left.
    for (let i = 0; i < 1000 && spawnsInFlight() > 0; i++) await realDelay(10);
    expect(spawnsInFlight()).toBe(0);
    expect(liveProcessGroups()).toBe(0);
    expect(pidsWhere("cmdline", (t) => t.includes(`${dir}/holdpid`)).filter(isLive)).toEqual([]);
  });

  it("an idle helper ends after SPAWN_HELPER_IDLE_MS (its memory given back); the next spawn starts another", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    await exec()(echo, undefined, { timeoutMs: 10_000 });
    expect(spawnHelperStarted()).toBe(true);
    vi.advanceTimersByTime(SPAWN_HELPER_IDLE_MS - 1);
    expect(spawnHelperStarted()).toBe(true);
    vi.advanceTimersByTime(1);
    expect(spawnHelperStarted()).toBe(false);
    vi.useRealTimers();
    expect((await exec()(echo, undefined, { timeoutMs: 10_000 })).stdout).toBe("relayed\n");
    expect(spawnHelperStarted()).toBe(true);
  });

  it("a run in flight keeps a process alive; an idle helper lets it exit", () => {
    // A script whose only pending work is the exec: with the helper unref'd throughout, Node would end it with
    // exit code 13 (an unsettled top-level await) before the sleep is over.
    const src = (p: string) => JSON.stringify(fileURLToPath(new URL(`../src/${p}`, import.meta.url)));
    const script = [
      `import { createExec } from ${src("exec/exec.ts")};`,
      `import { command } from ${src("define/command.ts")};`,
      `const nap = command("sleep", ["0.3"]);`,
      `const r = await createExec([nap], "/usr/bin:/bin")(nap, undefined, { timeoutMs: 10_000 });`,
      "process.stdout.write(String(r.exitCode));",
    ].join("\n");
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toBe("0");
  });

  it("is a process of its own (ADR 0068), and a SIGKILLed server takes it and its runs along", async () => {
    const pidFile = join(dir, "held.pid");
    await rm(pidFile, { force: true });
    const src = (p: string) => JSON.stringify(fileURLToPath(new URL(`../src/${p}`, import.meta.url)));
    const script = [
      `import { createExec } from ${src("exec/exec.ts")};`,
      `import { command } from ${src("define/command.ts")};`,
      `const hold = command("holdpid", []);`,
      `await createExec([hold], ${JSON.stringify(`${dir}:/usr/bin:/bin`)})(hold, undefined, { timeoutMs: 60_000 });`,
    ].join("\n");
    // Its stderr kept: a server that ended on its own (a crash) would take the helper down with SIGKILL in its exit
    // hook, which is not what this test is about, and says so below.
    const server = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    server.stderr.setEncoding("utf8").on("data", (c: string) => {
      stderr += c;
    });
    const exited = new Promise<[number | null, string | null]>((r) => server.once("exit", (c, s) => r([c, s])));
    const held = await pidFrom(pidFile);
    expect(held).toBeGreaterThan(0);
    // The run's parent is the helper, a child of the server marked as such in its argv.
    const helper = readParent(held);
    expect(helper).not.toBe(server.pid);
    // Running, it shows its name, not its ~4 KB of source: in `ps` (cmdline) and as its thread's name (comm).
    const cmdline = await readFile(`/proc/${helper}/cmdline`, "utf8");
    expect(cmdline.replace(/\0+$/, "")).toBe(SPAWN_HELPER_MARK);
    expect((await readFile(`/proc/${helper}/comm`, "utf8")).trim()).toBe(SPAWN_HELPER_MARK.slice(0, 15));
    expect(readParent(helper)).toBe(server.pid);
    // What the run started in its group (its `sleep`) goes too: the helper's death signal is SIGTERM, on which
    // it kills the groups it runs; killed outright, only its direct children died (their own death signal).
    let sleeper = 0;
    for (let i = 0; i < 1000 && !(sleeper > 0); i++) {
      sleeper = Number((await readFile(`/proc/${held}/task/${held}/children`, "utf8")).trim().split(" ")[0]);
      if (!(sleeper > 0)) await realDelay(10);
    }
    expect(sleeper).toBeGreaterThan(0);
    expect({ alive: server.exitCode === null && server.signalCode === null, stderr }).toEqual({
      alive: true,
      stderr: "",
    });
    server.kill("SIGKILL");
    expect({ exit: await exited, stderr }).toEqual({ exit: [null, "SIGKILL"], stderr: "" });
    for (let i = 0; i < 200 && (isLive(helper) || isLive(held) || isLive(sleeper)); i++) await realDelay(50);
    // A survivor's state (/proc/<pid>/stat) names what held it up, should one ever be left.
    const state = (pid: number) =>
      isLive(pid) ? readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.slice(0, 40) : "gone";
    expect([state(helper), state(held), state(sleeper)]).toEqual(["gone", "gone", "gone"]);
  });

  it("a call whose helper does not answer ends at its deadline as not started, and its program never runs on", async () => {
    await exec()(echo, undefined, { timeoutMs: 10_000 });
    const [helper] = ourHelpers();
    expect(helper).toBeGreaterThan(0);
    process.kill(Number(helper), "SIGSTOP");
    try {
      const r = await exec()(holdpid, undefined, { timeoutMs: 300 }).catch((e: unknown) => e);
      expect(r).toMatchObject({ code: "E_TIMEOUT", message: "holdpid was not started within 300 ms" });
    } finally {
      process.kill(Number(helper), "SIGCONT");
    }
    // Once the helper runs again it starts the abandoned program (before the next, in order), which is SIGKILLed
    // with its group as soon as it is reported.
    const next = await exec()(echo, undefined, { timeoutMs: 10_000 });
    expect(next.stdout).toBe("relayed\n");
    const abandoned = () => pidsWhere("cmdline", (c) => c.includes(`${dir}/holdpid`)).filter(isLive);
    for (let i = 0; i < 200 && abandoned().length > 0; i++) await realDelay(20);
    expect(abandoned()).toEqual([]);
    // Its outcome comes back a moment after it is gone (the helper reaps it, then says so).
    for (let i = 0; i < 500 && spawnsInFlight() > 0; i++) await realDelay(20);
    expect([spawnsInFlight(), liveProcessGroups()]).toEqual([0, 0]);
  });

  it("a helper left stopped with a run not started is replaced: the run fails then, the next spawn works", async () => {
    await exec()(echo, undefined, { timeoutMs: 10_000 });
    const [stuck] = ourHelpers();
    expect(stuck).toBeGreaterThan(0);
    process.kill(Number(stuck), "SIGSTOP");
    setHelperStoppedMs(200);
    try {
      // Its deadline is far off: the answer is the replacement's, not a timeout.
      const r = await exec()(holdpid, undefined, { timeoutMs: 20_000 }).catch((e: unknown) => e);
      expect(r).toMatchObject({ code: "E_EXEC_FAILED", message: expect.stringContaining("was stopped for 200 ms") });
      for (let i = 0; i < 500 && isLive(Number(stuck)); i++) await realDelay(10);
      expect(isLive(Number(stuck))).toBe(false);
      const next = await exec()(echo, undefined, { timeoutMs: 10_000 });
      expect(next.stdout).toBe("relayed\n");
      const [fresh] = ourHelpers();
      expect(fresh).toBeGreaterThan(0);
      expect(fresh).not.toBe(stuck);
      // The stuck one never started the run it was handed.
      expect(pidsWhere("cmdline", (c) => c.includes(`${dir}/holdpid`)).filter(isLive)).toEqual([]);
      expect([spawnsInFlight(), liveProcessGroups()]).toEqual([0, 0]);
    } finally {
      setHelperStoppedMs(undefined);
      if (isLive(Number(stuck))) process.kill(Number(stuck), "SIGKILL");
    }
    expect(HELPER_STOPPED_MS).toBeGreaterThanOrEqual(1_000);
  });

  it("a helper that is only quiet (a run started, no output) is never taken for a stopped one", async () => {
    const pidFile = join(dir, "held.pid");
    await rm(pidFile, { force: true });
    await exec()(echo, undefined, { timeoutMs: 10_000 });
    const [helper] = ourHelpers();
    const held = exec()(holdpid, undefined, { timeoutMs: 60_000 }).catch((e: unknown) => e);
    const pid = await pidFrom(pidFile);
    expect(pid).toBeGreaterThan(0);
    // Ten of the (shortened) stops' length without a word from the helper: it sleeps (S), it is not stopped (T).
    setHelperStoppedMs(100);
    try {
      await realDelay(1_000);
      expect(isLive(Number(helper))).toBe(true);
      expect(spawnsInFlight()).toBe(1);
      // Its group: the shell and its `sleep`.
      process.kill(-pid, "SIGTERM");
      expect(await held).toMatchObject({
        code: "E_EXEC_FAILED",
        message: "holdpid was ended by SIGTERM before it answered",
      });
      expect(ourHelpers()).toEqual([helper]);
    } finally {
      setHelperStoppedMs(undefined);
    }
  });

  it("runs the checked program through setpriv: its argv unchanged, every argument its own (ADR 0051)", async () => {
    expect(deathTieWrapper()?.args).toEqual(["--pdeathsig", "KILL", "--"]);
    const r = await exec()(printargs, undefined, { timeoutMs: 10_000 });
    // Options that setpriv knows reach the program, not setpriv.
    expect(r.stdout).toBe(`${dir}/printargs\n--reuid=0\n--\n-e\n`);
    // setpriv execs the program itself: argv[0] is the bare name, as `ps` showed it before.
    const own = await exec()(ownArgv, undefined, { timeoutMs: 10_000 });
    expect(own.stdout).toBe("sh\n-c\ntr '\\0' '\\n' </proc/$$/cmdline\n");
  });

  it("a child still running keeps the helper: its idle end never kills a run in flight", async () => {
    const pidFile = join(dir, "held.pid");
    await rm(pidFile, { force: true });
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const ctl = new AbortController();
    // A short run ends first, so the idle timer would start if runs in flight did not hold it off.
    await exec()(echo, undefined, { timeoutMs: 10_000 });
    const held = exec()(holdpid, undefined, { timeoutMs: 100 * SPAWN_HELPER_IDLE_MS, signal: ctl.signal }).catch(
      (e: unknown) => e,
    );
    const pid = await pidFrom(pidFile);
    expect(pid).toBeGreaterThan(0);
    vi.advanceTimersByTime(3 * SPAWN_HELPER_IDLE_MS);
    expect(spawnHelperStarted()).toBe(true);
    await realDelay(50);
    expect(isLive(pid)).toBe(true);
    vi.useRealTimers();
    ctl.abort();
    expect(await held).toMatchObject({ code: "E_TIMEOUT" });
    for (let i = 0; i < 200 && isLive(pid); i++) await realDelay(50);
    expect(isLive(pid)).toBe(false);
  });

  it("a follow stream forks on the helper too: the helper's death takes its child along, and it ends", async () => {
    const pidFile = join(dir, "held.pid");
    await rm(pidFile, { force: true });
    const lines = await spawnLines([holdpid], `${dir}:/usr/bin:/bin`, "holdpid", [], { timeoutMs: 60_000 });
    // Its output comes through the helper: the stream is one of the helper's runs.
    expect(spawnsInFlight()).toBe(1);
    const pid = await pidFrom(pidFile);
    expect(pid).toBeGreaterThan(0);
    expect(lines.pid).toBe(pid);
    await stopSpawnHelper();
    // Killed by its death signal (setpriv), not by us: nothing here signalled the group.
    for (let i = 0; i < 200 && isLive(pid); i++) await realDelay(50);
    expect(isLive(pid)).toBe(false);
    expect(await lines.ended).toMatchObject({ reason: "exit", exitCode: null });
    expect(liveProcessGroups()).toBe(0);
  });

  it("a helper left stopped while it holds only a follow stream is replaced: the stream ends, its child dies", async () => {
    // `up --processes`: the servers are such children; a stopped helper hid a server's exit (stop 38's review).
    const pidFile = join(dir, "held.pid");
    await rm(pidFile, { force: true });
    const lines = await spawnLines([holdpid], `${dir}:/usr/bin:/bin`, "holdpid", [], { timeoutMs: 60_000 });
    // And a long-lived child as `up --processes` holds a server: its end is told with the signal it died of.
    const server = await spawnGroup("sleep", ["30"], { PATH: "/usr/bin:/bin" });
    const serverEnd = new Promise((r) => server.child.once("close", (code, signal) => r({ code, signal })));
    const pid = await pidFrom(pidFile);
    expect(pid).toBeGreaterThan(0);
    const [helper] = ourHelpers();
    expect(helper).toBeGreaterThan(0);
    setHelperStoppedMs(200);
    process.kill(Number(helper), "SIGSTOP");
    try {
      expect(await lines.ended).toMatchObject({ reason: "exit", exitCode: null });
      expect(await serverEnd).toEqual({ code: null, signal: "SIGKILL" });
      for (let i = 0; i < 200 && (isLive(pid) || isLive(server.pgid) || isLive(Number(helper))); i++) {
        await realDelay(50);
      }
      expect([isLive(pid), isLive(server.pgid), isLive(Number(helper))]).toEqual([false, false, false]);
      server.reap();
      expect(liveProcessGroups()).toBe(0);
      const next = await exec()(echo, undefined, { timeoutMs: 10_000 });
      expect(next.stdout).toBe("relayed\n");
    } finally {
      setHelperStoppedMs(undefined);
      if (isLive(Number(helper))) process.kill(Number(helper), "SIGKILL");
    }
  });
});
