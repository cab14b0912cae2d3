/**
 * Runs a checked command on the spawn helper thread (spawn-worker.ts), so fork/exec never stalls the serving
 * thread (ADR 0042). One helper per process, shared by every server `roadnerd up` hosts, started on the first
 * spawn (attach pays nothing), unref'd while idle and ended after SPAWN_HELPER_IDLE_MS without a run (its ~9 MiB
 * given back); if it dies, the runs it held fail with E_EXEC_FAILED and the next spawn starts a new one. Timers,
 * signals and kills stay with the caller (exec.ts).
 */
import { Worker } from "node:worker_threads";
import { DiagError } from "../errors/errors.ts";
import { findOnPath } from "./death-tie.ts";
import { type FromSpawnWorker, type SpawnJob, type SpawnOutcome, spawnWorkerMain } from "./spawn-worker.ts";

/** An idle helper ends after this long; the next spawn starts another (~20–40 ms, once per burst). */
export const SPAWN_HELPER_IDLE_MS = 20_000;

// getBuiltinModule, not require: an eval'd worker is an ES module when the process was started with
// --input-type=module. findOnPath goes along as source too: the helper resolves the program for setpriv.
const SOURCE = `const fs = process.getBuiltinModule("node:fs");
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

let current: Helper | undefined;
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
}

function startHelper(): Helper {
  const worker = new Worker(SOURCE, {
    eval: true,
    name: "roadnerd-spawn",
    // It needs no environment of its own: each job carries its child's.
    env: {},
    // Holds at most MAX_PROCS outputs (1 MiB each by default) at a time: a small young generation keeps it lean.
    resourceLimits: { maxYoungGenerationSizeMb: 4 },
  });
  const helper: Helper = { worker, running: 0 };
  worker.on("message", (msg: FromSpawnWorker) => {
    const p = pending.get(msg.id);
    if (!p) return;
    if (msg.type === "started") return p.started(msg.pid);
    pending.delete(msg.id);
    helper.running -= 1;
    if (helper.running === 0) {
      worker.unref();
      idleTimer = setTimeout(() => {
        idleTimer = undefined;
        if (current !== helper) return;
        current = undefined;
        void worker.terminate();
      }, SPAWN_HELPER_IDLE_MS);
      idleTimer.unref();
    }
    p.resolve(msg.outcome);
  });
  worker.once("error", (e) => gone(helper, "failed", e));
  worker.once("exit", (code) => gone(helper, `stopped (exit ${code})`));
  worker.unref();
  return helper;
}

/** Run `job` on the helper; `started` hears the child's pid (its process group) as soon as it exists. */
export function relaySpawn(job: Omit<SpawnJob, "type" | "id">, started: (pid: number) => void): Promise<SpawnOutcome> {
  clearTimeout(idleTimer);
  idleTimer = undefined;
  current ??= startHelper();
  const helper = current;
  const id = nextId++;
  return new Promise<SpawnOutcome>((resolve, reject) => {
    pending.set(id, { helper, started, resolve, reject });
    helper.running += 1;
    // A run in flight keeps the process alive, as the child itself did when the spawn was on this thread.
    helper.worker.ref();
    helper.worker.postMessage({ ...job, type: "run", id } satisfies SpawnJob);
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
  return pending.size;
}
