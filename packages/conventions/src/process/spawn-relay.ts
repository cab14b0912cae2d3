/**
 * Runs a checked command on the spawn helper thread (spawn-worker.ts), so fork/exec never stalls the serving
 * thread (ADR 0042). One helper per process, shared by every server `roadnerd up` hosts, started on the first
 * spawn (attach pays nothing) and unref'd while idle; if it dies, the runs it held fail with E_EXEC_FAILED and
 * the next spawn starts a new one. Timers, signals and kills stay with the caller (exec.ts).
 */
import { Worker } from "node:worker_threads";
import { DiagError } from "../errors/errors.ts";
import { type FromSpawnWorker, type SpawnJob, type SpawnOutcome, spawnWorkerMain } from "./spawn-worker.ts";

// getBuiltinModule, not require: an eval'd worker is an ES module when the process was started with
// --input-type=module.
const SOURCE = `(${spawnWorkerMain.toString()})(process.getBuiltinModule("node:worker_threads").parentPort, process.getBuiltinModule("node:child_process").spawn);`;

interface Pending {
  started(pid: number): void;
  resolve(outcome: SpawnOutcome): void;
  reject(error: unknown): void;
}

let helper: Worker | undefined;
let nextId = 1;
const pending = new Map<number, Pending>();

function failAll(why: string, cause?: unknown): void {
  for (const [id, p] of pending) {
    pending.delete(id);
    p.reject(new DiagError("E_EXEC_FAILED", `the spawn helper ${why}`, { hint: "try again", cause }));
  }
}

function startHelper(): Worker {
  const worker = new Worker(SOURCE, {
    eval: true,
    name: "roadnerd-spawn",
    // It needs no environment of its own: each job carries its child's.
    env: {},
    // Holds at most MAX_PROCS outputs (1 MiB each by default) at a time: a small young generation keeps it lean.
    resourceLimits: { maxYoungGenerationSizeMb: 4 },
  });
  worker.on("message", (msg: FromSpawnWorker) => {
    const p = pending.get(msg.id);
    if (!p) return;
    if (msg.type === "started") return p.started(msg.pid);
    pending.delete(msg.id);
    if (pending.size === 0) worker.unref();
    p.resolve(msg.outcome);
  });
  worker.once("error", (e) => {
    if (helper === worker) helper = undefined;
    failAll("failed", e);
  });
  worker.once("exit", (code) => {
    if (helper === worker) helper = undefined;
    failAll(`stopped (exit ${code})`);
  });
  worker.unref();
  return worker;
}

/** Run `job` on the helper; `started` hears the child's pid (its process group) as soon as it exists. */
export function relaySpawn(job: Omit<SpawnJob, "type" | "id">, started: (pid: number) => void): Promise<SpawnOutcome> {
  helper ??= startHelper();
  const worker = helper;
  const id = nextId++;
  return new Promise<SpawnOutcome>((resolve, reject) => {
    pending.set(id, { started, resolve, reject });
    // A run in flight keeps the process alive, as the child itself did when the spawn was on this thread.
    worker.ref();
    worker.postMessage({ ...job, type: "run", id } satisfies SpawnJob);
  });
}

/** Whether the helper thread is running: for tests (it starts on the first spawn, not at import). */
export function spawnHelperStarted(): boolean {
  return helper !== undefined;
}

/** End the helper thread (tests: a helper that dies mid-run). The next spawn starts a new one. */
export async function stopSpawnHelper(): Promise<void> {
  await helper?.terminate();
}

/** Runs handed to the helper whose outcome has not come back: for tests. */
export function spawnsInFlight(): number {
  return pending.size;
}
