/**
 * Runs a checked command in the spawn helper process (spawnHelperMain, exec.ts), so fork/exec never stalls the
 * serving process (ADR 0042, 0068): fork() copies the page tables of the process that calls it and holds its
 * memory map meanwhile, which a helper *thread* did not avoid. One helper per process, shared by every server
 * `roadnerd up` hosts, started on the first spawn (attach pays nothing), unref'd while idle and ended after
 * SPAWN_HELPER_IDLE_MS without a run (its ~11 MiB given back); if it dies, the runs it held fail with
 * E_EXEC_FAILED and the next spawn starts a new one; so does one that stays stopped (SIGSTOP) for
 * HELPER_STOPPED_MS while it holds a run: it is killed. Timers, signals and kills stay with the caller (exec.ts).
 */

import type { ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { Readable } from "node:stream";
import { finished } from "node:stream/promises";
import { setImmediate } from "node:timers";
import { DiagError } from "../errors/errors.ts";
import { deathTieWrapper, findOnPath } from "../process/death-tie.ts";
import { procState } from "../process/proc-state.ts";
import {
  type FromSpawnHelper,
  forkNodeHelper,
  type GroupJob,
  type SpawnJob,
  type SpawnOutcome,
  spawnHelperMain,
  type ToSpawnHelper,
} from "./exec.ts";

/**
 * A helper the kernel shows stopped (SIGSTOP, state T in /proc/<pid>/stat) this long while it holds a run or a
 * long-lived child, with no word from it meanwhile, is replaced: killed, its runs failed then (E_EXEC_FAILED), the
 * next spawn starts a new one. Before, every spawn of every server `up` hosts failed at its deadline until it ran
 * again, and under `up --processes`, whose servers are the helper's children, a server's exit went unseen (stop
 * 37's and 38's reviews). Only a stop counts: a helper slow to start (1% of a CPU took it 6–11 s to boot in the
 * review) or busy is never killed for being quiet, and a traced one (state t) is left alone.
 */
export const HELPER_STOPPED_MS = 5_000;
let stoppedMs = HELPER_STOPPED_MS;

/** Tests: a shorter stop before a stopped helper is replaced (undefined: HELPER_STOPPED_MS again). */
export function setHelperStoppedMs(ms: number | undefined): void {
  stoppedMs = ms ?? HELPER_STOPPED_MS;
}

/** An idle helper ends after this long; the next spawn starts another (~90–105 ms here, once per burst). */
export const SPAWN_HELPER_IDLE_MS = 20_000;

/**
 * The helper's node: no JIT and no V8 platform threads (it forks and moves strings: ~11 MiB USS, 4 threads, against
 * ~15 MiB and 7), a small young generation (it holds at most MAX_PROCS outputs, 1 MiB each by default).
 */
const HELPER_NODE_FLAGS = ["--jitless", "--v8-pool-size=0", "--max-semi-space-size=1"];

/**
 * The helper's name: first in its argv (a comment opening its source) and, once it runs, its process title, which
 * replaces the ~4 KB of source `ps` and /proc/<pid>/cmdline would show (a review found them flooding `ps`) and
 * names its thread (comm) instead of Node's "MainThread".
 */
export const SPAWN_HELPER_MARK = "roadnerd-spawn-helper";

// getBuiltinModule, not require: the same text whatever the module type. findOnPath goes along as source too:
// the helper resolves the program for setpriv. When the serving process goes (its end of the channel closes on
// any exit; a SIGKILL of it sends the helper SIGTERM, its death signal), the helper kills the groups it still
// runs, whatever their programs started in them, and ends. The SIGTERM listener stays (`on`, not `once`): the
// kernel sends the death signal again each time a thread of the dying process exits and the helper passes to the
// next one (kernel/exit.c, forget_original_parent; seen in a signal trace), and a second SIGTERM after a `once`
// listener was gone met the default action: the helper died before it had killed its groups (1 run in ~30 under
// load, CI once). Built when the first helper starts, not at import: exec.ts imports this module too.
const source = (): string => `/* ${SPAWN_HELPER_MARK} */ process.title = "${SPAWN_HELPER_MARK}";
const fs = process.getBuiltinModule("node:fs");
const stop = (${spawnHelperMain.toString()})(
  { postMessage: (m) => { if (process.connected) process.send(m); }, on: (e, f) => process.on(e, f) },
  process.getBuiltinModule("node:child_process").spawn,
  (binary, path) => (${findOnPath.toString()})(binary, path, fs.accessSync, fs.statSync),
);
let ending = false;
const end = () => { if (ending) return; ending = true; stop(); process.exit(0); };
process.once("disconnect", end);
process.on("SIGTERM", end);`;

interface Helper {
  proc: ChildProcess;
  /** Runs handed to it whose outcome has not come back. */
  running: number;
  /** While it holds a run: its state looked at (watch). */
  watchdog?: NodeJS.Timeout;
  /** performance.now() of the first look that found it stopped, since its last message. */
  stoppedSince?: number;
}

interface Pending {
  helper: Helper;
  started(pid: number): void;
  resolve(outcome: SpawnOutcome): void;
  reject(error: unknown): void;
}

/** A relayed long-lived child (relayGroup) until its exit has come back. */
interface PendingGroup {
  helper: Helper;
  child?: RelayedChild;
  started(child: RelayedChild): void;
  failed(error: NodeJS.ErrnoException): void;
}

let current: Helper | undefined;
let exitHooked = false;
const groups = new Map<number, PendingGroup>();
let idleTimer: NodeJS.Timeout | undefined;
let nextId = 1;
const pending = new Map<number, Pending>();

/** The runs `helper` held fail: it is gone. */
function gone(helper: Helper, why: string, cause?: unknown): void {
  if (current === helper) current = undefined;
  clearInterval(helper.watchdog);
  for (const [id, p] of pending) {
    if (p.helper !== helper) continue;
    pending.delete(id);
    p.reject(new DiagError("E_EXEC_FAILED", `the spawn helper ${why}`, { hint: "try again", cause }));
  }
  for (const [id, g] of groups) {
    if (g.helper !== helper) continue;
    groups.delete(id);
    // Its child dies with the helper by setpriv's death signal, SIGKILL (so `up` says "exited (SIGKILL)", not
    // "code null"); callers still kill the group.
    if (g.child) g.child.exit(null, deathTieWrapper() ? "SIGKILL" : null);
    else g.failed(Object.assign(new Error(`the spawn helper ${why}`), { code: "EHELPER" }));
  }
}

/**
 * While the helper holds a run or a long-lived child: its state read every stoppedMs / 4 (at most every second),
 * and it is replaced once found stopped for stoppedMs (see HELPER_STOPPED_MS). A message from it says it runs.
 */
function watch(helper: Helper): void {
  if (helper.watchdog) return;
  helper.watchdog = setInterval(
    () => {
      if (procState(helper.proc.pid) !== "T") {
        helper.stoppedSince = undefined;
        return;
      }
      const now = performance.now();
      helper.stoppedSince ??= now;
      if (now - helper.stoppedSince >= stoppedMs) replace(helper);
    },
    Math.max(10, Math.min(1_000, stoppedMs / 4)),
  );
  helper.watchdog.unref();
}

function replace(helper: Helper): void {
  gone(helper, `was stopped for ${stoppedMs} ms; replaced by a new one`);
  helper.proc.kill("SIGKILL");
}

/** One run or group less on `helper`: idle, it is unref'd and ends after SPAWN_HELPER_IDLE_MS. */
function settled(helper: Helper): void {
  helper.running -= 1;
  if (helper.running > 0) return;
  clearInterval(helper.watchdog);
  helper.watchdog = undefined;
  unref(helper.proc);
  idleTimer = setTimeout(() => {
    idleTimer = undefined;
    if (current !== helper) return;
    current = undefined;
    // It ends on "disconnect", with no run left to kill.
    if (helper.proc.connected) helper.proc.disconnect();
  }, SPAWN_HELPER_IDLE_MS);
  idleTimer.unref();
}

function onGroupMessage(helper: Helper, msg: Exclude<FromSpawnHelper, { type: "done" }>): void {
  const g = groups.get(msg.id);
  if (!g) return;
  if (msg.type === "started") {
    const child = new RelayedChild(msg.pid, (k) => send(helper, { type: "resume", id: msg.id, k }));
    g.child = child;
    g.started(child);
    return;
  }
  if (msg.type === "data") {
    g.child?.data(msg.k, msg.chunk);
    return;
  }
  groups.delete(msg.id);
  settled(helper);
  if (msg.type === "failed") g.failed(Object.assign(new Error(msg.message), { code: msg.errorCode }));
  else g.child?.exit(msg.code, msg.signal);
}

/** The channel and the process both: either alone would keep this process's event loop alive. */
function unref(proc: ChildProcess): void {
  proc.unref();
  proc.channel?.unref();
}

/** A send that fails (the helper has just died) is not an "error" event: the runs it held fail at its "exit". */
const ignoreSendError = () => undefined;

function send(helper: Helper, msg: ToSpawnHelper): void {
  if (helper.proc.connected) helper.proc.send(msg, ignoreSendError);
}

function startHelper(): Helper {
  if (!exitHooked) {
    exitHooked = true;
    // This process exiting takes the helper at once, and its children with it (setpriv's death signal): its own
    // "disconnect" would come a moment later, after whoever waits on our exit has looked.
    process.once("exit", () => {
      const pid = current?.proc.pid;
      if (pid === undefined) return;
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // ESRCH: already gone.
      }
    });
  }
  // "advanced": outputs (up to 1 MiB each) cross as V8-serialized strings, not JSON-escaped.
  const proc = forkNodeHelper(source(), { flags: HELPER_NODE_FLAGS, serialization: "advanced", deathSignal: "TERM" });
  const helper: Helper = { proc, running: 0 };
  proc.on("message", (msg: FromSpawnHelper) => {
    helper.stoppedSince = undefined;
    if (msg.type !== "done" && groups.has(msg.id)) return onGroupMessage(helper, msg);
    const p = pending.get(msg.id);
    if (!p) return;
    if (msg.type === "started") return p.started(msg.pid);
    if (msg.type !== "done") return;
    pending.delete(msg.id);
    settled(helper);
    p.resolve(msg.outcome);
  });
  proc.on("error", (e) => gone(helper, "failed", e));
  proc.once("exit", (code, signal) => gone(helper, `stopped (${signal ?? `exit ${code}`})`));
  unref(proc);
  return helper;
}

/** The helper for one more run or group: started if need be, ref'd, watched, its idle end called off. */
function take(): Helper {
  clearTimeout(idleTimer);
  idleTimer = undefined;
  current ??= startHelper();
  const helper = current;
  helper.running += 1;
  // A run in flight keeps the process alive, as the child itself did when the spawn was on this thread.
  helper.proc.ref();
  helper.proc.channel?.ref();
  // Watched while it holds any (settled stops it at the last).
  watch(helper);
  return helper;
}

/** Run `job` on the helper; `started` hears the child's pid (its process group) as soon as it exists. */
export function relaySpawn(job: Omit<SpawnJob, "type" | "id">, started: (pid: number) => void): Promise<SpawnOutcome> {
  const id = nextId++;
  return new Promise<SpawnOutcome>((resolve, reject) => {
    const helper = take();
    pending.set(id, { helper, started, resolve, reject });
    send(helper, { ...job, type: "run", id });
  });
}

/**
 * A long-lived child forked by the helper, its stdout and stderr relayed here as they come. What callers used of
 * a ChildProcess: `pid`, `stdout`, `stderr` (text, read at the reader's pace) and "close" (code, signal) once it
 * has exited and both streams have been read to their end or dropped.
 */
export class RelayedChild extends EventEmitter<{ close: [code: number | null, signal: NodeJS.Signals | null] }> {
  readonly pid: number;
  readonly stdout: Readable;
  readonly stderr: Readable;
  private readonly resume: (k: 0 | 1) => void;
  /** Per stream: the helper holds it paused until the reader asks for more (read()). */
  private readonly waiting: [boolean, boolean] = [false, false];
  constructor(pid: number, resume: (k: 0 | 1) => void) {
    super();
    this.pid = pid;
    this.resume = resume;
    const relayed = (k: 0 | 1) =>
      new Readable({
        encoding: "utf8",
        read: () => {
          if (!this.waiting[k]) return;
          this.waiting[k] = false;
          resume(k);
        },
      });
    this.stdout = relayed(0);
    this.stderr = relayed(1);
  }

  /** A chunk from the helper: handed on, and the next asked for at once unless the reader is behind. */
  data(k: 0 | 1, chunk: string): void {
    const stream = k === 0 ? this.stdout : this.stderr;
    // Dropped by its reader: drained, so the child is not held on a full pipe.
    if (stream.destroyed || stream.push(chunk)) this.resume(k);
    else this.waiting[k] = true;
  }

  exit(code: number | null, signal: string | null): void {
    this.stdout.push(null);
    this.stderr.push(null);
    const done = (s: Readable) => {
      // Never read (no listener, no iterator): drained, or "close" would wait on it forever.
      if (s.readableFlowing === null) s.resume();
      return finished(s).catch(() => undefined);
    };
    // Whether a stream is read is judged after this turn of the event loop: the channel hands over every message
    // it read at once, each on its own tick ahead of any promise, so a quick program's start, output and exit can
    // all land before the caller's `await spawnGroup(…)` has resumed and attached its readers.
    setImmediate(() => {
      void Promise.all([done(this.stdout), done(this.stderr)]).then(() =>
        this.emit("close", code, signal as NodeJS.Signals | null),
      );
    });
  }
}

/** Start `job` as a long-lived child on the helper; rejects with the spawn's errno error (code ENOENT…). */
export function relayGroup(job: Omit<GroupJob, "type" | "id">): Promise<RelayedChild> {
  const id = nextId++;
  return new Promise<RelayedChild>((resolve, reject) => {
    const helper = take();
    groups.set(id, { helper, started: resolve, failed: reject });
    send(helper, { ...job, type: "group", id });
  });
}

/** Whether the helper is running: for tests (it starts on the first spawn, not at import). */
export function spawnHelperStarted(): boolean {
  return current !== undefined;
}

/** SIGKILL the helper (tests: a helper that dies mid-run) and wait for its end. The next spawn starts a new one. */
export async function stopSpawnHelper(): Promise<void> {
  const proc = current?.proc;
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once("exit", r));
  proc.kill("SIGKILL");
  await exited;
}

/** Runs handed to the helper whose outcome has not come back: for tests. */
export function spawnsInFlight(): number {
  return pending.size + groups.size;
}
