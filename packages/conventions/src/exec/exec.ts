/**
 * The one module that spawns processes. Read-only by construction: a binary runs only as one of the
 * commands its tool declared (command.ts), there is no shell, the environment is scrubbed, and a timeout
 * or the caller going away kills the whole process group. Two shapes: run to completion and capture
 * (spawnChecked), or stream stdout line by line for a follow mode (spawnLines, over spawnGroup). Every fork/exec
 * is in the spawn helper process (exec-relay.ts), so it never stalls the serving process (ADR 0042, 0068), but the
 * start of a Node helper (forkNodeHelper: the spawn helper itself, spawnNodeChild), once and kept (ADR 0059).
 */

import { type ChildProcess, type spawn as nodeSpawn, spawn as spawnHere } from "node:child_process";
import { buildArgv, type Command, checkAllowed, type SlotValues } from "../define/command.ts";
import { DiagError } from "../errors/errors.ts";
import { deathTieWrapper } from "../process/death-tie.ts";
import type { Limiter } from "../runtime/limiter.ts";
import { type RelayedChild, relayGroup, relaySpawn } from "./exec-relay.ts";

export const DEFAULT_EXEC_MAX_BYTES = 1024 * 1024;
/** Time between SIGTERM and SIGKILL for a process group that outlives its deadline. */
export const KILL_GRACE_MS = 200;

export interface ExecOptions {
  signal?: AbortSignal | undefined;
  timeoutMs: number;
  maxBytes?: number;
  /** The server's bound on concurrent subprocesses: wait for a slot within timeoutMs. */
  procs?: Limiter | undefined;
}

export interface ExecResult {
  stdout: string;
  stderr: string;
  exitCode: number;
  /** stdout or stderr hit maxBytes and was cut. */
  truncated: boolean;
  durationMs: number;
}

/** Run one of the allowed commands with its slot values. */
export interface Exec {
  (cmd: Command<never>, values: undefined, options: ExecOptions): Promise<ExecResult>;
  <N extends string>(cmd: Command<N>, values: SlotValues<N>, options: ExecOptions): Promise<ExecResult>;
}

/** Process groups we started and that may still be alive: killed if this process exits. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const pgid of liveGroups) killGroup(pgid, "SIGKILL");
  });
}

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/** How many process groups we started are still running: for tests and the load suite. */
export function liveProcessGroups(): number {
  return liveGroups.size;
}

/** The environment every child gets: PATH from the caller, the C locale, UTC; nothing inherited. */
export function scrubbedEnv(path: string, extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  return { PATH: path, LC_ALL: "C", LANG: "C", TZ: "UTC", ...extra };
}

/** A long-lived child in its own process group, tracked so it dies with this process. */
export interface GroupChild {
  child: RelayedChild;
  /** The group id (the leader's pid). */
  pgid: number;
  /** Signal the whole group. */
  kill(signal: NodeJS.Signals): void;
  /** The leader has exited: SIGKILL whatever it left in its group, and stop tracking it. */
  reap(): void;
}

/**
 * Spawn a child that outlives one call (a follow stream, a supervised server): no shell, the given
 * environment, stdin closed, its own process group, SIGKILLed if this process exits or dies (setpriv, ADR 0051).
 * Forked by the spawn helper like every exec (ADR 0068, 0051), its output relayed at the reader's pace;
 * resolves once it runs, rejects with the spawn's errno error (code ENOENT…). Short commands go through
 * spawnChecked; callers check their argv (allowlist, or a server's own bin) before this.
 */
export async function spawnGroup(
  binary: string,
  args: readonly string[],
  env: Record<string, string>,
): Promise<GroupChild> {
  installExitHook();
  const child = await relayGroup({ binary, args, env, tie: deathTieWrapper() });
  const pgid = child.pid;
  liveGroups.add(pgid);
  return {
    child,
    pgid,
    kill: (signal) => killGroup(pgid, signal),
    reap: () => {
      killGroup(pgid, "SIGKILL");
      liveGroups.delete(pgid);
    },
  };
}

/** A Node child with an IPC channel (process.send / "message"), in its own process group. */
export interface NodeChild {
  readonly child: ChildProcess;
  /** SIGKILL its group and stop tracking it (idempotent). */
  end(): void;
}

/**
 * Start this Node binary on `source` (`node -e`) as a long-lived helper that talks over an IPC channel, e.g.
 * the storage server's walker (ADR 0059): no shell, stdio closed, the scrubbed environment, its own process
 * group, SIGKILLed when this process exits or dies (setpriv, ADR 0051; the source should also exit on
 * "disconnect"). Forked on the calling thread, not the spawn helper: an IPC channel belongs to the event loop
 * that created it, and such a helper starts once and then serves many calls, as a follow stream did (ADR 0042).
 * The source is trusted code (a function's text), never input. A failed start is the child's "error" event.
 */
export function spawnNodeChild(source: string): NodeChild {
  installExitHook();
  const child = forkNodeHelper(source);
  const pgid = child.pid;
  if (pgid !== undefined) liveGroups.add(pgid);
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    if (pgid === undefined) return;
    killGroup(pgid, "SIGKILL");
    liveGroups.delete(pgid);
  };
  child.once("exit", end);
  return { child, end };
}

/**
 * `node [flags] -e source` with an IPC channel, detached (its own session and group: a Ctrl-C meant for the
 * server does not reach it), tied to the calling thread by setpriv where there is one, stdio closed, the
 * scrubbed environment. What spawnNodeChild and the spawn helper (exec-relay.ts) start; not tracked here.
 */
export function forkNodeHelper(
  source: string,
  options: {
    flags?: readonly string[];
    serialization?: "json" | "advanced";
    /** The signal the helper gets when this thread ends (default KILL); TERM for one that cleans up first. */
    deathSignal?: "KILL" | "TERM";
  } = {},
): ChildProcess {
  const tie = deathTieWrapper(options.deathSignal);
  const node = process.execPath;
  const argv = [...(options.flags ?? []), "-e", source];
  return spawnHere(tie?.file ?? node, tie ? [...tie.args, node, ...argv] : argv, {
    stdio: ["ignore", "ignore", "ignore", "ipc"],
    detached: true,
    env: scrubbedEnv("/usr/bin:/bin"),
    serialization: options.serialization ?? "json",
  });
}

/** Spawn `binary argv` after checking it against `allowed`, by the spawn helper process (ADR 0068). */
export async function spawnChecked(
  allowed: readonly Command[],
  execPath: string,
  binary: string,
  args: readonly string[],
  options: ExecOptions,
): Promise<ExecResult> {
  checkAllowed(allowed, binary, args);
  if (options.signal?.aborted) throw new DiagError("E_TIMEOUT", `${binary} not started: request already ended`);
  const queued = performance.now();
  const release = options.procs ? await options.procs.wait(binary, options.signal, options.timeoutMs) : () => {};
  try {
    return await spawnNow(binary, args, execPath, options, queued);
  } finally {
    release();
  }
}

async function spawnNow(
  binary: string,
  args: readonly string[],
  execPath: string,
  options: ExecOptions,
  queued: number,
): Promise<ExecResult> {
  installExitHook();
  // The deadline counts the wait for a slot; messages name the call's own timeout, not what the queue left of it
  // (299 ms of 300 on a busy machine).
  const saidMs = options.timeoutMs;
  const left = Math.max(1, Math.round(saidMs - (performance.now() - queued)));
  const started = performance.now();
  let pgid: number | undefined;
  let reason: "timeout" | "aborted" | undefined;
  // Set when the call ends before its process exists (a helper held up by an earlier spawn): the answer comes at
  // the deadline anyway, and the process is SIGKILLed the moment it starts.
  let abandon: (() => void) | undefined;
  let abandoned = false;
  const stop = (why: "timeout" | "aborted") => {
    if (reason) return;
    reason = why;
    if (pgid === undefined) return abandon?.();
    killGroup(pgid, "SIGTERM");
    const group = pgid;
    setTimeout(() => killGroup(group, "SIGKILL"), KILL_GRACE_MS).unref();
  };
  const timer = setTimeout(() => stop("timeout"), left);
  const onAbort = () => stop("aborted");
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    // fork/exec in the helper process (ADR 0068); the deadline, the signal and the kills stay here.
    const outcome = relaySpawn(
      {
        binary,
        args,
        env: scrubbedEnv(execPath),
        maxBytes: options.maxBytes ?? DEFAULT_EXEC_MAX_BYTES,
        // The helper runs it through setpriv: it dies with the helper, which dies with this process (ADR 0051).
        tie: deathTieWrapper(),
      },
      (pid) => {
        if (abandoned) return killGroup(pid, "SIGKILL");
        pgid = pid;
        liveGroups.add(pid);
      },
    );
    const result = await Promise.race([
      outcome,
      new Promise<never>((_, reject) => {
        abandon = () => {
          abandoned = true;
          outcome.catch(() => undefined);
          // Never started: say so, not "did not finish" (a helper stopped or held up by a slow fork).
          reject(
            new DiagError("E_TIMEOUT", `${binary} was not started within ${saidMs} ms`, {
              hint: "the spawn helper did not answer in time; try again",
            }),
          );
        };
      }),
    ]);
    const durationMs = Math.round(performance.now() - started);
    if (reason) throw new DiagError("E_TIMEOUT", `${binary} did not finish (timeout ${saidMs} ms)`);
    if (result.errorCode === "ENOENT") {
      throw new DiagError("E_NO_BINARY", `${binary} is not installed (searched ${execPath})`, {
        hint: `install the package that provides ${binary}`,
      });
    }
    if (result.errorCode !== undefined || (result.exitCode === null && !result.truncated)) {
      // Not our bug: something else on the machine ended it (we did not: `reason` is unset), or it could not start.
      const why = result.signal
        ? `was ended by ${result.signal} before it answered`
        : `could not be run (${result.errorCode ?? "error"})`;
      throw new DiagError("E_EXEC_FAILED", `${binary} ${why}`, {
        hint: "try again; if it repeats, run it by hand",
        cause: result,
      });
    }
    return {
      stdout: result.stdout,
      stderr: result.stderr,
      exitCode: result.exitCode ?? -1,
      truncated: result.truncated,
      durationMs,
    };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    if (pgid !== undefined) {
      // The leader has exited; make sure nothing it left behind in its group lives on.
      killGroup(pgid, "SIGKILL");
      liveGroups.delete(pgid);
    }
  }
}

/** Identity, not shape: a tool or stream runs the commands it declared, nothing it builds on the fly. */
function declaredArgv(
  allowed: readonly Command[],
  cmd: Command,
  values: Readonly<Record<string, string | number>> | undefined,
  owner: "tool" | "stream",
): string[] {
  if (!allowed.includes(cmd))
    throw new DiagError("E_UNSUPPORTED", `command not declared by this ${owner}: ${cmd.binary}`);
  return buildArgv(cmd, values);
}

/** An Exec that runs only `allowed` (a tool's own commands), finding binaries on `execPath`, within `procs`. */
export function createExec(allowed: readonly Command[], execPath: string, procs?: Limiter): Exec {
  return (async (cmd: Command, values: Readonly<Record<string, string | number>> | undefined, options: ExecOptions) =>
    spawnChecked(allowed, execPath, cmd.binary, declaredArgv(allowed, cmd, values, "tool"), {
      procs,
      ...options,
    })) as Exec;
}

/** Longest line a line stream yields whole; longer lines are cut (an ellipsis marks the cut). */
export const DEFAULT_MAX_LINE_CHARS = 16 * 1024;
const STDERR_TAIL_CHARS = 4096;

export interface LinesOptions {
  /** Ends the process when it aborts (the stream is over or its consumer left). */
  signal?: AbortSignal | undefined;
  /** Hard bound on the process's life. */
  timeoutMs: number;
  maxLineChars?: number;
}

/** How a line process ended: on its own (`exit`), at its deadline, aborted, or stopped by its reader. */
export interface LinesEnd {
  reason: "exit" | "timeout" | "aborted" | "stopped";
  exitCode: number | null;
  /** The last few KiB of stderr. */
  stderr: string;
}

/**
 * A long-running read command (journalctl --follow) as lines of stdout. Iterate it once; leaving the loop
 * (break, throw, return) ends the process group. `ended` settles once the process is gone.
 */
export interface LineProcess extends AsyncIterable<string> {
  readonly pid: number;
  readonly ended: Promise<LinesEnd>;
  /** SIGTERM the process group, SIGKILL after KILL_GRACE_MS. */
  stop(): void;
}

/** Run one of the allowed commands and stream its stdout line by line. */
export interface ExecLines {
  (cmd: Command<never>, values: undefined, options: LinesOptions): Promise<LineProcess>;
  <N extends string>(cmd: Command<N>, values: SlotValues<N>, options: LinesOptions): Promise<LineProcess>;
}

/**
 * Spawn `binary argv` after checking it against `allowed` and stream its stdout as lines: the same allowlist,
 * scrubbed environment and own process group as spawnChecked, killed at `timeoutMs`, when `signal` aborts or
 * when the reader stops. It takes no MAX_PROCS slot: it lives as long as its stream (bounded by MAX_STREAMS and
 * the stream's duration), and holding a slot that long would starve every tool call.
 */
export async function spawnLines(
  allowed: readonly Command[],
  execPath: string,
  binary: string,
  args: readonly string[],
  options: LinesOptions,
): Promise<LineProcess> {
  checkAllowed(allowed, binary, args);
  if (options.signal?.aborted) throw new DiagError("E_TIMEOUT", `${binary} not started: request already ended`);
  let group: GroupChild;
  try {
    group = await spawnGroup(binary, args, scrubbedEnv(execPath));
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === "ENOENT") {
      throw new DiagError("E_NO_BINARY", `${binary} is not installed (searched ${execPath})`, {
        hint: `install the package that provides ${binary}`,
      });
    }
    throw new DiagError("E_EXEC_FAILED", `${binary} could not be run (${err.code ?? "error"})`, { cause: err });
  }
  const { child, pgid } = group;
  let reason: LinesEnd["reason"] | undefined;
  const stop = (why: LinesEnd["reason"]) => {
    if (reason) return;
    reason = why;
    group.kill("SIGTERM");
    setTimeout(() => group.kill("SIGKILL"), KILL_GRACE_MS).unref();
  };
  const timer = setTimeout(() => stop("timeout"), options.timeoutMs);
  const onAbort = () => stop("aborted");
  options.signal?.addEventListener("abort", onAbort, { once: true });
  // Aborted while the helper was starting it.
  if (options.signal?.aborted) onAbort();
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (d: string) => {
    stderr = (stderr + d).slice(-STDERR_TAIL_CHARS);
  });
  const ended = new Promise<LinesEnd>((resolve) => {
    child.once("close", (code) => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      // The leader is gone; nothing it left behind in its group lives on.
      group.reap();
      resolve({ reason: reason ?? "exit", exitCode: reason ? null : code, stderr });
    });
  });
  const max = options.maxLineChars ?? DEFAULT_MAX_LINE_CHARS;
  let iterated = false;
  return {
    pid: pgid,
    ended,
    stop: () => stop("stopped"),
    [Symbol.asyncIterator]() {
      if (iterated) throw new Error(`${binary}: a line process can be read once`);
      iterated = true;
      return readLines(child.stdout, max, () => stop("stopped"));
    },
  };
}

/** Split a stream into lines, each cut at `max` characters; `done` runs however the reader leaves. */
async function* readLines(stdout: NodeJS.ReadableStream, max: number, done: () => void): AsyncGenerator<string> {
  stdout.setEncoding("utf8");
  let buf = "";
  // Past `max` characters the rest of the line is dropped up to its newline: memory stays bounded.
  let dropping = false;
  let finished = false;
  try {
    for await (const chunk of stdout as AsyncIterable<string>) {
      let text = chunk;
      let nl = text.indexOf("\n");
      while (nl >= 0) {
        const part = text.slice(0, nl);
        text = text.slice(nl + 1);
        if (dropping) dropping = false;
        else yield cutLine(buf + part, max);
        buf = "";
        nl = text.indexOf("\n");
      }
      if (dropping) continue;
      buf += text;
      if (buf.length > max) {
        yield cutLine(buf, max);
        buf = "";
        dropping = true;
      }
    }
    if (buf.length > 0 && !dropping) yield cutLine(buf, max);
    finished = true;
  } finally {
    // The reader left early: the program is not wanted any more. (At the end of its output it exits on its
    // own, and the deadline and signal still bound it if it does not.)
    if (!finished) done();
  }
}

function cutLine(line: string, max: number): string {
  return line.length <= max ? line : `${line.slice(0, Math.max(0, max - 1))}…`;
}

/** An ExecLines that runs only `allowed` (a stream's own commands), finding binaries on `execPath`. */
export function createExecLines(allowed: readonly Command[], execPath: string): ExecLines {
  return (async (cmd: Command, values: Readonly<Record<string, string | number>> | undefined, options: LinesOptions) =>
    spawnLines(allowed, execPath, cmd.binary, declaredArgv(allowed, cmd, values, "stream"), options)) as ExecLines;
}

// ---------------------------------------------------------------------------------------------------------------
// The spawn helper process's body, the only place that forks for a call (exec-relay.ts hands it the jobs this
// module checked). libuv forks on the calling thread and waits there until the child has called execve, and
// fork() copies the page tables of the whole process, holding its memory map meanwhile: in the serving process
// that stalls every request (ADR 0042, ADR 0068); in a small process of its own it stalls only that process. The
// function is shipped to the helper as its source text, so it must reference nothing but its parameters and
// globals (no imports, no module constants): the same text then runs from TypeScript under vitest, from a
// bundle, and on every Node the servers support.

/** The helper's end of its channel to the serving process (process.send / process.on("message") there). */
export interface SpawnPort {
  postMessage(msg: FromSpawnHelper): void;
  on(event: "message", listener: (msg: ToSpawnHelper) => void): void;
}

/** One command to run: already checked against its allowlist by the serving thread. */
export interface SpawnJob {
  type: "run";
  id: number;
  binary: string;
  args: readonly string[];
  env: Record<string, string>;
  /** Cap on each of stdout and stderr, in bytes: past it the group is sent SIGTERM and the output cut. */
  maxBytes: number;
  /** The wrapper that ties the child's life to the helper's (death-tie.ts), when there is one. */
  tie?: { file: string; args: readonly string[] } | undefined;
}

/** How a run ended; what it means (timeout, missing binary, a signal) is decided by the serving thread. */
export interface SpawnOutcome {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  signal: string | null;
  truncated: boolean;
  /** The spawn itself failed (ENOENT, EACCES…). */
  errorCode?: string | undefined;
}

/**
 * A long-lived child whose output is relayed as it comes (follow streams, supervised servers, runProgram): each
 * chunk of stdout (k 0) or stderr (k 1) is sent as text and that stream paused until the serving thread asks
 * for more (`resume`), so a slow reader holds the child back as a pipe would.
 */
export interface GroupJob {
  type: "group";
  id: number;
  binary: string;
  args: readonly string[];
  env: Record<string, string>;
  tie?: { file: string; args: readonly string[] } | undefined;
}

export type ToSpawnHelper = SpawnJob | GroupJob | { type: "resume"; id: number; k: 0 | 1 };

export type FromSpawnHelper =
  | { type: "started"; id: number; pid: number }
  | { type: "done"; id: number; outcome: SpawnOutcome }
  | { type: "failed"; id: number; errorCode: string; message: string }
  | { type: "data"; id: number; k: 0 | 1; chunk: string }
  | { type: "exit"; id: number; code: number | null; signal: string | null };

/** The helper's main; returns what kills every process group it started that is still running. */
export function spawnHelperMain(
  port: SpawnPort,
  spawn: typeof nodeSpawn,
  find: (binary: string, path: string | undefined) => string | undefined,
): () => void {
  // Through the wrapper when there is one and the program is on the child's PATH (else spawned directly, so a
  // missing one is ENOENT as before): the child is SIGKILLed when the helper ends (death-tie.ts), and the
  // helper stays while it has runs. setpriv finds the name on the same PATH: argv[0] stays the bare name.
  const tied = (job: SpawnJob | GroupJob) =>
    job.tie && find(job.binary, job.env.PATH) !== undefined
      ? { file: job.tie.file, argv: [...job.tie.args, job.binary, ...job.args] }
      : { file: job.binary, argv: job.args };
  /** The relayed children's stdout and stderr, by job id: resumed when the serving thread asks. */
  const groups = new Map<number, [NodeJS.ReadableStream | null, NodeJS.ReadableStream | null]>();
  /** The process groups of every child still running: killed if the serving process goes first. */
  const live = new Set<number>();
  const group = (job: GroupJob) => {
    const { file, argv } = tied(job);
    let child: ReturnType<typeof nodeSpawn>;
    const failed = (e: NodeJS.ErrnoException) =>
      port.postMessage({ type: "failed", id: job.id, errorCode: e.code ?? "error", message: e.message });
    try {
      child = spawn(file, argv, { shell: false, detached: true, stdio: ["ignore", "pipe", "pipe"], env: job.env });
    } catch (e) {
      failed(e as NodeJS.ErrnoException);
      return;
    }
    if (child.pid === undefined) {
      child.once("error", failed);
      return;
    }
    child.on("error", () => undefined);
    const groupPid = child.pid;
    live.add(groupPid);
    port.postMessage({ type: "started", id: job.id, pid: groupPid });
    const streams: [NodeJS.ReadableStream | null, NodeJS.ReadableStream | null] = [child.stdout, child.stderr];
    groups.set(job.id, streams);
    for (const k of [0, 1] as const) {
      const stream = streams[k];
      if (!stream) continue;
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => {
        stream.pause();
        port.postMessage({ type: "data", id: job.id, k, chunk });
      });
    }
    child.once("close", (code: number | null, signal: string | null) => {
      live.delete(groupPid);
      groups.delete(job.id);
      port.postMessage({ type: "exit", id: job.id, code, signal });
    });
  };
  port.on("message", (msg: ToSpawnHelper) => {
    if (msg.type === "resume") return void groups.get(msg.id)?.[msg.k]?.resume();
    if (msg.type === "group") return group(msg);
    const job = msg;
    const chunks: Buffer[][] = [[], []];
    const bytes = [0, 0];
    let truncated = false;
    let errorCode: string | undefined;
    let finished = false;
    let pid: number | undefined;
    const finish = (exitCode: number | null, signal: string | null) => {
      if (finished) return;
      finished = true;
      const text = (k: number) => Buffer.concat(chunks[k] ?? []).toString("utf8");
      const outcome: SpawnOutcome = { stdout: text(0), stderr: text(1), exitCode, signal, truncated, errorCode };
      port.postMessage({ type: "done", id: job.id, outcome });
    };
    let child: ReturnType<typeof nodeSpawn>;
    const { file, argv } = tied(job);
    try {
      child = spawn(file, argv, {
        shell: false,
        // A new process group, so a timeout can kill grandchildren that hold our pipes.
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
        env: job.env,
      });
    } catch (e) {
      errorCode = (e as NodeJS.ErrnoException).code ?? "error";
      finish(null, null);
      return;
    }
    pid = child.pid;
    if (pid !== undefined) {
      live.add(pid);
      port.postMessage({ type: "started", id: job.id, pid });
    }
    const take = (k: number) => (chunk: Buffer) => {
      const room = job.maxBytes - (bytes[k] ?? 0);
      if (chunk.length <= room) {
        chunks[k]?.push(chunk);
        bytes[k] = (bytes[k] ?? 0) + chunk.length;
        return;
      }
      if (room > 0) chunks[k]?.push(chunk.subarray(0, room));
      bytes[k] = job.maxBytes;
      if (truncated) return;
      truncated = true;
      // Enough read: the program is not wanted any more (the serving thread SIGKILLs the group once done).
      if (pid !== undefined) {
        try {
          process.kill(-pid, "SIGTERM");
        } catch {
          // ESRCH: already gone.
        }
      }
    };
    child.stdout?.on("data", take(0));
    child.stderr?.on("data", take(1));
    child.once("error", (e: NodeJS.ErrnoException) => {
      errorCode = e.code ?? "error";
      // A spawn that failed has no process to wait for.
      if (pid === undefined) finish(null, null);
    });
    child.once("close", (code: number | null, signal: string | null) => {
      if (pid !== undefined) live.delete(pid);
      finish(code, signal);
    });
  });
  return () => {
    for (const pid of live) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // ESRCH: already gone.
      }
    }
  };
}
