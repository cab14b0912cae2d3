/**
 * The one module that spawns processes. Read-only by construction: a binary runs only if the server
 * allowlisted it with the exact argument shape, user values fill typed slots and can never be options,
 * there is no shell, the environment is scrubbed, and a timeout kills the whole process group.
 */
import { execa } from "execa";
import { DiagError } from "./errors.ts";

export const DEFAULT_EXEC_MAX_BYTES = 1024 * 1024;
/** Time between SIGTERM and SIGKILL for a process group that outlives its deadline. */
export const KILL_GRACE_MS = 200;

/** A user-supplied argument slot: validated by pattern, never allowed to look like an option. */
export interface ArgSlot {
  slot: string;
  pattern: RegExp;
}

export type ArgShape = ReadonlyArray<string | ArgSlot>;

/** binary name → the argument lists it may be run with. */
export type ExecAllowlist = Readonly<Record<string, ReadonlyArray<ArgShape>>>;

export function slot(name: string, pattern: RegExp): ArgSlot {
  return { slot: name, pattern };
}

export interface ExecOptions {
  signal?: AbortSignal | undefined;
  timeoutMs: number;
  maxBytes?: number;
}

export interface ExecResult {
  stdout: string;
  stderr: string;
  exitCode: number;
  /** stdout or stderr hit maxBytes and was cut. */
  truncated: boolean;
  durationMs: number;
}

export type Exec = (binary: string, args: readonly string[], options: ExecOptions) => Promise<ExecResult>;

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

export function matchesShape(args: readonly string[], shape: ArgShape): boolean {
  if (args.length !== shape.length) return false;
  return shape.every((part, i) => {
    const arg = args[i] as string;
    if (typeof part === "string") return arg === part;
    return !arg.startsWith("-") && part.pattern.test(arg) && !/[\0\n\r]/.test(arg);
  });
}

/** Refuse before any process exists unless the binary and the exact argument shape are allowlisted. */
export function checkAllowed(allowlist: ExecAllowlist, binary: string, args: readonly string[]): void {
  const shapes = Object.hasOwn(allowlist, binary) ? allowlist[binary] : undefined;
  if (!shapes) throw new DiagError("E_UNSUPPORTED", `binary not allowlisted: ${binary}`);
  if (!shapes.some((shape) => matchesShape(args, shape))) {
    throw new DiagError("E_UNSUPPORTED", `arguments not allowlisted for ${binary}`);
  }
}

export function createExec(allowlist: ExecAllowlist, execPath: string): Exec {
  return async (binary, args, options) => {
    checkAllowed(allowlist, binary, args);
    if (options.signal?.aborted) throw new DiagError("E_TIMEOUT", `${binary} not started: request already ended`);
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
      if (reason) {
        throw new DiagError("E_TIMEOUT", `${binary} did not finish (timeout ${options.timeoutMs} ms)`);
      }
      const failure = result as { code?: string; isMaxBuffer?: boolean };
      if (failure.code === "ENOENT") {
        throw new DiagError("E_NO_BINARY", `${binary} is not installed (searched ${execPath})`, {
          hint: `install the package that provides ${binary}`,
        });
      }
      if (result.failed && !failure.isMaxBuffer && result.exitCode === undefined) {
        throw new DiagError("E_INTERNAL", `${binary} could not be run`, { cause: result });
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
  };
}
