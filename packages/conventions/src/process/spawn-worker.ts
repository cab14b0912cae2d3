/**
 * The body of the spawn helper thread (spawn-relay.ts). libuv forks on the calling thread and waits there until
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

export type FromSpawnWorker =
  | { type: "started"; id: number; pid: number }
  | { type: "done"; id: number; outcome: SpawnOutcome };

export function spawnWorkerMain(
  port: MessagePort,
  spawn: typeof nodeSpawn,
  find: (binary: string, path: string | undefined) => string | undefined,
): void {
  port.on("message", (job: SpawnJob) => {
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
    // Through the wrapper when there is one and the program is found (else spawn reports ENOENT, as before):
    // the child is SIGKILLed when this thread ends (death-tie.ts), and this thread stays while it has runs.
    const program = job.tie ? find(job.binary, job.env.PATH) : undefined;
    const file = job.tie && program ? job.tie.file : job.binary;
    const argv = job.tie && program ? [...job.tie.args, program, ...job.args] : job.args;
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
