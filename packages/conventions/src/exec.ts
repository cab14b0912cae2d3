/**
 * The one module that spawns processes. Read-only by construction: a binary runs only as one of the
 * commands its tool declared (command.ts), there is no shell, the environment is scrubbed, and a timeout
 * or the caller going away kills the whole process group.
 */
import { execa } from "execa";
import { buildArgv, type Command, checkAllowed, type SlotValues } from "./command.ts";
import { DiagError } from "./errors.ts";
import type { Limiter } from "./limiter.ts";

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

/** Spawn `binary argv` after checking it against `allowed`. The only call to execa in the repository. */
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
    const left = Math.max(1, Math.round(options.timeoutMs - (performance.now() - queued)));
    return await spawnNow(binary, args, execPath, { ...options, timeoutMs: left });
  } finally {
    release();
  }
}

async function spawnNow(
  binary: string,
  args: readonly string[],
  execPath: string,
  options: ExecOptions,
): Promise<ExecResult> {
  installExitHook();
  const started = performance.now();
  const maxBytes = options.maxBytes ?? DEFAULT_EXEC_MAX_BYTES;
  const child = execa(binary, args, {
    shell: false,
    // A new process group, so a timeout can kill grandchildren that hold our pipes.
    detached: true,
    cleanup: false,
    stdin: "ignore",
    extendEnv: false,
    env: { PATH: execPath, LC_ALL: "C", LANG: "C", TZ: "UTC" },
    maxBuffer: maxBytes,
    reject: false,
    stripFinalNewline: false,
  });
  const pgid = child.pid;
  if (pgid !== undefined) liveGroups.add(pgid);
  let reason: "timeout" | "aborted" | undefined;
  const stop = (why: "timeout" | "aborted") => {
    if (pgid === undefined || reason) return;
    reason = why;
    killGroup(pgid, "SIGTERM");
    setTimeout(() => killGroup(pgid, "SIGKILL"), KILL_GRACE_MS).unref();
  };
  const timer = setTimeout(() => stop("timeout"), options.timeoutMs);
  const onAbort = () => stop("aborted");
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const result = await child;
    const durationMs = Math.round(performance.now() - started);
    if (reason) throw new DiagError("E_TIMEOUT", `${binary} did not finish (timeout ${options.timeoutMs} ms)`);
    const failure = result as { code?: string; isMaxBuffer?: boolean };
    if (failure.code === "ENOENT") {
      throw new DiagError("E_NO_BINARY", `${binary} is not installed (searched ${execPath})`, {
        hint: `install the package that provides ${binary}`,
      });
    }
    if (result.failed && !failure.isMaxBuffer && result.exitCode === undefined) {
      // Not our bug: something else on the machine ended it (we did not: `reason` is unset), or it could not start.
      const signal = (result as { signal?: string }).signal;
      const why = signal
        ? `was ended by ${signal} before it answered`
        : `could not be run (${failure.code ?? "error"})`;
      throw new DiagError("E_EXEC_FAILED", `${binary} ${why}`, {
        hint: "try again; if it repeats, run it by hand",
        cause: result,
      });
    }
    return {
      stdout: String(result.stdout ?? ""),
      stderr: String(result.stderr ?? ""),
      exitCode: result.exitCode ?? -1,
      truncated: Boolean(failure.isMaxBuffer),
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

/** An Exec that runs only `allowed` (a tool's own commands), finding binaries on `execPath`, within `procs`. */
export function createExec(allowed: readonly Command[], execPath: string, procs?: Limiter): Exec {
  return ((cmd: Command, values: Readonly<Record<string, string | number>> | undefined, options: ExecOptions) => {
    // Identity, not shape: a tool runs the commands it declared, nothing it builds on the fly.
    if (!allowed.includes(cmd)) {
      return Promise.reject(new DiagError("E_UNSUPPORTED", `command not declared by this tool: ${cmd.binary}`));
    }
    let argv: string[];
    try {
      argv = buildArgv(cmd, values);
    } catch (err) {
      return Promise.reject(err);
    }
    return spawnChecked(allowed, execPath, cmd.binary, argv, { procs, ...options });
  }) as Exec;
}
