/**
 * Runs a checked command on the spawn helper thread (spawnWorkerMain, exec.ts), so fork/exec never stalls the serving
 * thread (ADR 0042). One helper per process, shared by every server `roadnerd up` hosts, started on the first
 * spawn (attach pays nothing), unref'd while idle and ended after SPAWN_HELPER_IDLE_MS without a run (its ~9 MiB
 * given back); if it dies, the runs it held fail with E_EXEC_FAILED and the next spawn starts a new one. Timers,
 * signals and kills stay with the caller (exec.ts).
 */
import { EventEmitter } from "node:events";
import { Readable } from "node:stream";
import { finished } from "node:stream/promises";
import type { Worker } from "node:worker_threads";
import { DiagError } from "../errors/errors.ts";
import { findOnPath } from "../process/death-tie.ts";
import {
  type FromSpawnWorker,
  type GroupJob,
  type SpawnJob,
  type SpawnOutcome,
  spawnWorkerMain,
  type ToSpawnWorker,
} from "./exec.ts";

/** An idle helper ends after this long; the next spawn starts another (~20–40 ms, once per burst). */
export const SPAWN_HELPER_IDLE_MS = 20_000;

// getBuiltinModule, not require: an eval'd worker is an ES module when the process was started with
// --input-type=module. findOnPath goes along as source too: the helper resolves the program for setpriv.
// Built when the first helper starts, not at import: exec.ts imports this module too.
const source = (): string => `const fs = process.getBuiltinModule("node:fs");
(${spawnWorkerMain.toString()})(
  process.getBuiltinModule("node:worker_threads").parentPort,
  process.getBuiltinModule("node:child_process").spawn,
  (binary, path) => (${findOnPath.toString()})(binary, path, fs.accessSync, fs.statSync),
);`;

interface Helper {
  worker: Worker;
  /** Runs handed to it whose outcome has not come back. */
  running: number;
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
const groups = new Map<number, PendingGroup>();
let idleTimer: NodeJS.Timeout | undefined;
let nextId = 1;
const pending = new Map<number, Pending>();

/** The runs `helper` held fail: it is gone. */
function gone(helper: Helper, why: string, cause?: unknown): void {
  if (current === helper) current = undefined;
  for (const [id, p] of pending) {
    if (p.helper !== helper) continue;
    pending.delete(id);
    p.reject(new DiagError("E_EXEC_FAILED", `the spawn helper ${why}`, { hint: "try again", cause }));
  }
  for (const [id, g] of groups) {
    if (g.helper !== helper) continue;
    groups.delete(id);
    // Its child died with the helper thread (setpriv's death signal); callers still kill the group.
    if (g.child) g.child.exit(null, null);
    else g.failed(Object.assign(new Error(`the spawn helper ${why}`), { code: "EHELPER" }));
  }
}

/** One run or group less on `helper`: idle, it is unref'd and ends after SPAWN_HELPER_IDLE_MS. */
function settled(helper: Helper): void {
  helper.running -= 1;
  if (helper.running > 0) return;
  helper.worker.unref();
  idleTimer = setTimeout(() => {
    idleTimer = undefined;
    if (current !== helper) return;
    current = undefined;
    void helper.worker.terminate();
  }, SPAWN_HELPER_IDLE_MS);
  idleTimer.unref();
}

function onGroupMessage(helper: Helper, msg: Exclude<FromSpawnWorker, { type: "done" }>): void {
  const g = groups.get(msg.id);
  if (!g) return;
  if (msg.type === "started") {
    const child = new RelayedChild(msg.pid, (k) => helper.worker.postMessage({ type: "resume", id: msg.id, k }));
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

function startHelper(): Helper {
  // Loaded here, at the first spawn: worker_threads is ~1 ms of a start that may never spawn (issue 17, target 2).
  const { Worker } = process.getBuiltinModule("node:worker_threads");
  const worker = new Worker(source(), {
    eval: true,
    name: "roadnerd-spawn",
    // It needs no environment of its own: each job carries its child's.
    env: {},
    // Holds at most MAX_PROCS outputs (1 MiB each by default) at a time: a small young generation keeps it lean.
    resourceLimits: { maxYoungGenerationSizeMb: 4 },
  });
  const helper: Helper = { worker, running: 0 };
  worker.on("message", (msg: FromSpawnWorker) => {
    if (msg.type !== "done" && groups.has(msg.id)) return onGroupMessage(helper, msg);
    const p = pending.get(msg.id);
    if (!p) return;
    if (msg.type === "started") return p.started(msg.pid);
    if (msg.type !== "done") return;
    pending.delete(msg.id);
    settled(helper);
    p.resolve(msg.outcome);
  });
  worker.once("error", (e) => gone(helper, "failed", e));
  worker.once("exit", (code) => gone(helper, `stopped (exit ${code})`));
  worker.unref();
  return helper;
}

/** The helper for one more run or group: started if need be, ref'd, its idle end called off. */
function take(): Helper {
  clearTimeout(idleTimer);
  idleTimer = undefined;
  current ??= startHelper();
  const helper = current;
  helper.running += 1;
  // A run in flight keeps the process alive, as the child itself did when the spawn was on this thread.
  helper.worker.ref();
  return helper;
}

/** Run `job` on the helper; `started` hears the child's pid (its process group) as soon as it exists. */
export function relaySpawn(job: Omit<SpawnJob, "type" | "id">, started: (pid: number) => void): Promise<SpawnOutcome> {
  const id = nextId++;
  return new Promise<SpawnOutcome>((resolve, reject) => {
    const helper = take();
    pending.set(id, { helper, started, resolve, reject });
    helper.worker.postMessage({ ...job, type: "run", id } satisfies ToSpawnWorker);
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
    void Promise.all([done(this.stdout), done(this.stderr)]).then(() =>
      this.emit("close", code, signal as NodeJS.Signals | null),
    );
  }
}

/** Start `job` as a long-lived child on the helper; rejects with the spawn's errno error (code ENOENT…). */
export function relayGroup(job: Omit<GroupJob, "type" | "id">): Promise<RelayedChild> {
  const id = nextId++;
  return new Promise<RelayedChild>((resolve, reject) => {
    const helper = take();
    groups.set(id, { helper, started: resolve, failed: reject });
    helper.worker.postMessage({ ...job, type: "group", id } satisfies ToSpawnWorker);
  });
}

/** Whether the helper thread is running: for tests (it starts on the first spawn, not at import). */
export function spawnHelperStarted(): boolean {
  return current !== undefined;
}

/** End the helper thread (tests: a helper that dies mid-run). The next spawn starts a new one. */
export async function stopSpawnHelper(): Promise<void> {
  await current?.worker.terminate();
}

/** Runs handed to the helper whose outcome has not come back: for tests. */
export function spawnsInFlight(): number {
  return pending.size + groups.size;
}
