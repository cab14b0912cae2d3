/**
 * Part of the kernel's exec module (exec.ts checks, exec-relay.ts hands over, this file forks): the body of the
 * spawn helper thread. It only runs jobs exec.ts has already checked (allowlist, argv template, env). libuv forks on the calling thread and waits there until
 * the child has called execve: on the serving thread that stalls every request for as long (ADR 0042). Here it
 * stalls only this thread. The function is shipped to the thread as its source text, so it must reference
 * nothing but its parameters and globals (no imports, no module constants): the same text then runs from
 * TypeScript under vitest, from a bundle, and on every Node the servers support.
 */
import type { spawn as nodeSpawn } from "node:child_process";
import type { MessagePort } from "node:worker_threads";

/** One command to run: already checked against its allowlist by the serving thread. */
export interface SpawnJob {
  type: "run";
  id: number;
  binary: string;
  args: readonly string[];
  env: Record<string, string>;
  /** Cap on each of stdout and stderr, in bytes: past it the group is sent SIGTERM and the output cut. */
  maxBytes: number;
  /** The wrapper that ties the child's life to this thread's (death-tie.ts), when there is one. */
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

export type ToSpawnWorker = SpawnJob | GroupJob | { type: "resume"; id: number; k: 0 | 1 };

export type FromSpawnWorker =
  | { type: "started"; id: number; pid: number }
  | { type: "done"; id: number; outcome: SpawnOutcome }
  | { type: "failed"; id: number; errorCode: string; message: string }
  | { type: "data"; id: number; k: 0 | 1; chunk: string }
  | { type: "exit"; id: number; code: number | null; signal: string | null };

export function spawnWorkerMain(
  port: MessagePort,
  spawn: typeof nodeSpawn,
  find: (binary: string, path: string | undefined) => string | undefined,
): void {
  // Through the wrapper when there is one and the program is on the child's PATH (else spawned directly, so a
  // missing one is ENOENT as before): the child is SIGKILLed when this thread ends (death-tie.ts), and this
  // thread stays while it has runs. setpriv finds the name on the same PATH: argv[0] stays the bare name.
  const tied = (job: SpawnJob | GroupJob) =>
    job.tie && find(job.binary, job.env.PATH) !== undefined
      ? { file: job.tie.file, argv: [...job.tie.args, job.binary, ...job.args] }
      : { file: job.binary, argv: job.args };
  /** The relayed children's stdout and stderr, by job id: resumed when the serving thread asks. */
  const groups = new Map<number, [NodeJS.ReadableStream | null, NodeJS.ReadableStream | null]>();
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
    port.postMessage({ type: "started", id: job.id, pid: child.pid });
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
      groups.delete(job.id);
      port.postMessage({ type: "exit", id: job.id, code, signal });
    });
  };
  port.on("message", (msg: ToSpawnWorker) => {
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
    if (pid !== undefined) port.postMessage({ type: "started", id: job.id, pid });
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
    child.once("close", (code: number | null, signal: string | null) => finish(code, signal));
  });
}
