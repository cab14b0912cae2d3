/**
 * spawnLines / createExecLines / ctx.execLines: a long-running read command streamed line by line, with the
 * same allowlist, scrubbed environment and process-group kill as exec; refused before any process exists.
 */
import { access, chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { command, slot } from "../src/define/command.ts";
import { defineServer } from "../src/define/kit.ts";
import { defineStream } from "../src/define/stream.ts";
import { createExecLines, liveProcessGroups, spawnLines } from "../src/exec/exec.ts";
import { runStream } from "../src/runtime/run-stream.ts";
import { collectStream, testRuntime } from "../src/testing/inject.ts";
import { isLive } from "../src/testing/procfs.ts";
import { demoPackage } from "./fixtures/demo-server.ts";

let dir: string;

async function fake(name: string, script: string): Promise<void> {
  const path = join(dir, name);
  await writeFile(path, `#!/bin/sh\n${script}\n`);
  await chmod(path, 0o755);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rn-lines-"));
  // Records that it ran, prints its argv and environment, then lines slowly, then follows forever.
  await fake(
    "follow",
    `echo ran > "${dir}/follow.ran"
for a in "$@"; do echo "arg $a"; done
env | sort | tr '\\n' ' '; echo
sleep 30 &
echo $! > "${dir}/grandchild.pid"
i=0; while [ $i -lt 3 ]; do i=$((i+1)); echo "line $i"; done
printf 'no newline yet'; sleep 0.1; printf ' and now\\n'
head -c 300 /dev/zero | tr '\\0' x; echo; echo after-long
exec sleep 30`,
  );
  await fake("short", "echo one; echo two >&2; exit 4");
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  vi.useRealTimers();
});

/**
 * Deadlines and durations on the test's clock: the program gets all the real time it needs to print, and the
 * deadline comes when the test advances the clock past it. Processes and pipes stay real.
 */
const fakeClock = () => vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
const realSetTimeout = globalThis.setTimeout;

const follow = command("follow", ["--follow", slot("unit", /^[a-z]+\.service$/, { prefix: "--unit=" })]);
const short = command("short", []);
const missing = command("missing", []);
const path = () => `${dir}:/usr/bin:/bin`;

async function firstLines(n: number, p: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const line of p) {
    out.push(line);
    if (out.length === n) break;
  }
  return out;
}

describe("spawnLines", () => {
  it("streams stdout as lines, cuts long ones, scrubs the environment, and stops when the reader leaves", async () => {
    const p = await spawnLines([follow], path(), "follow", ["--follow", "--unit=ssh.service"], {
      timeoutMs: 10_000,
      maxLineChars: 200,
    });
    const lines = await firstLines(9, p);
    expect(lines).toEqual([
      "arg --follow",
      "arg --unit=ssh.service",
      // Only what exec passes: no HOME, no secrets from our environment (PWD is set by the shell itself).
      expect.stringMatching(/^LANG=C LC_ALL=C PATH=\S+ (PWD=\S+ )?(SHLVL=1 )?TZ=UTC $/),
      "line 1",
      "line 2",
      "line 3",
      "no newline yet and now",
      `${"x".repeat(199)}…`,
      "after-long",
    ]);
    const end = await p.ended;
    expect(end).toEqual({ reason: "stopped", exitCode: null, stderr: "" });
    const grandchild = Number((await readFile(join(dir, "grandchild.pid"), "utf8")).trim());
    await waitUntil(() => !isLive(grandchild));
    expect(isLive(grandchild)).toBe(false);
    expect(liveProcessGroups()).toBe(0);
  });

  it("ends at its deadline and when its signal aborts", async () => {
    fakeClock();
    const timed = await spawnLines([follow], path(), "follow", ["--follow", "--unit=a.service"], { timeoutMs: 200 });
    const all: string[] = [];
    const reading = (async () => {
      for await (const line of timed) all.push(line);
    })();
    await waitUntil(() => all.includes("after-long"));
    await vi.advanceTimersByTimeAsync(199);
    await new Promise((r) => realSetTimeout(r, 20));
    expect(isLive(timed.pid)).toBe(true);
    await vi.advanceTimersByTimeAsync(1);
    await reading;
    expect(all.at(-1)).toBe("after-long");
    expect((await timed.ended).reason).toBe("timeout");
    vi.useRealTimers();

    const controller = new AbortController();
    const aborted = await spawnLines([follow], path(), "follow", ["--follow", "--unit=a.service"], {
      timeoutMs: 10_000,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 100);
    for await (const _ of aborted) {
      // drain until the abort ends it
    }
    expect((await aborted.ended).reason).toBe("aborted");
    expect(liveProcessGroups()).toBe(0);
  });

  it("reports a program that ends on its own with its exit code and stderr", async () => {
    const p = await spawnLines([short], path(), "short", [], { timeoutMs: 5000 });
    const lines: string[] = [];
    for await (const line of p) lines.push(line);
    expect(lines).toEqual(["one"]);
    expect(await p.ended).toEqual({ reason: "exit", exitCode: 4, stderr: "two\n" });
  });

  it("keeps a quick program's output when its start, output and exit all arrive before the caller reads", async () => {
    // The helper's channel hands every message it read at once to this process, each on its own tick ahead of
    // any promise: blocking here while the program runs and exits puts "started", its lines and "exit" in one
    // read. The exit used to drain stdout unread (no reader yet), so the caller's loop saw no line at all.
    const warm = await spawnLines([short], path(), "short", [], { timeoutMs: 5000 });
    for await (const _ of warm) {
      // the helper is up: the next run starts at once
    }
    for (let i = 0; i < 3; i++) {
      const pending = spawnLines([short], path(), "short", [], { timeoutMs: 5000 });
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
      const p = await pending;
      const lines: string[] = [];
      for await (const line of p) lines.push(line);
      expect(lines).toEqual(["one"]);
      expect(await p.ended).toEqual({ reason: "exit", exitCode: 4, stderr: "two\n" });
    }
  });

  it("refuses an argv outside the templates or an undeclared binary before any process exists", async () => {
    await rm(join(dir, "follow.ran"), { force: true });
    for (const args of [
      ["--follow", "--unit=-x.service"],
      ["--follow", "--unit=a.service", "--extra"],
      ["--follow"],
      ["--vacuum-size=1"],
    ]) {
      await expect(spawnLines([follow], path(), "follow", args, { timeoutMs: 1000 })).rejects.toMatchObject({
        code: "E_UNSUPPORTED",
      });
    }
    await expect(spawnLines([follow], path(), "rm", ["-rf", "/"], { timeoutMs: 1000 })).rejects.toMatchObject({
      code: "E_UNSUPPORTED",
    });
    await expect(access(join(dir, "follow.ran"))).rejects.toThrow();
    expect(liveProcessGroups()).toBe(0);
  });

  it("maps a missing binary to E_NO_BINARY naming it", async () => {
    await expect(spawnLines([missing], path(), "missing", [], { timeoutMs: 1000 })).rejects.toMatchObject({
      code: "E_NO_BINARY",
      message: expect.stringContaining("missing is not installed"),
    });
  });
});

describe("createExecLines", () => {
  it("runs only the declared commands and refuses a slot value that does not fit", async () => {
    const lines = createExecLines([follow], path());
    await expect(lines(short, undefined, { timeoutMs: 1000 })).rejects.toMatchObject({ code: "E_UNSUPPORTED" });
    for (const unit of ["--help", "a;b.service", "x.service y.service", "../x.service"]) {
      await expect(lines(follow, { unit }, { timeoutMs: 1000 })).rejects.toMatchObject({ code: "E_INVALID_INPUT" });
    }
    expect(liveProcessGroups()).toBe(0);
  });
});

const lineStream = defineStream({
  name: "follow_lines",
  summary: "Emit each line of a followed program.",
  input: {},
  message: { line: z.string().describe("one line") },
  example: {},
  commands: [follow],
  shared: false,
  summarize: (m) => m.line,
  async run(_input, ctx) {
    const p = await ctx.execLines(follow, { unit: "ssh.service" });
    for await (const line of p) {
      if (line.startsWith("line ")) await ctx.emit({ line });
    }
  },
});
const lineServer = defineServer({ package: demoPackage, instructions: "x", tools: [], streams: [lineStream] });

describe("ctx.execLines", () => {
  it("is ended with the stream: its duration kills the process group", async () => {
    fakeClock();
    const messages: Array<{ line: string }> = [];
    const running = runStream(
      lineStream,
      { duration_ms: 500 },
      testRuntime(lineServer, { env: { EXEC_PATH: path() } }),
      {
        send: async (m) => {
          messages.push(m);
          return true;
        },
      },
    );
    // The program has printed its lines (however long that took); the duration is still to come.
    await waitUntil(() => messages.length === 3);
    await vi.advanceTimersByTimeAsync(500);
    const end = await running;
    vi.useRealTimers();
    expect(end).toBe("duration");
    expect(messages.map((m) => m.line)).toEqual(["line 1", "line 2", "line 3"]);
    await waitUntil(() => liveProcessGroups() === 0);
    expect(liveProcessGroups()).toBe(0);
  });

  it("is ended when the consumer takes no more", async () => {
    const { messages, end } = await collectStream(
      lineServer,
      lineStream,
      { duration_ms: 10_000 },
      { env: { EXEC_PATH: path() }, max: 1 },
    );
    expect(end).toBe("closed");
    expect(messages.map((m) => m.line)).toEqual(["line 1"]);
    await waitUntil(() => liveProcessGroups() === 0);
    expect(liveProcessGroups()).toBe(0);
  });
});

/** Poll on the real clock, bounded at 30 s (the caller's expect says what did not happen). */
async function waitUntil(check: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !check(); i++) await new Promise((r) => realSetTimeout(r, 50));
}
