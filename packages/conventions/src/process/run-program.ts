/**
 * Run a program the orchestrator itself chose (its own bin inside a test network namespace, for `roadnerd
 * eval`), not a tool's command: the kernel's one spawn (own process group, tracked, reaped), the given
 * environment only, a deadline that kills the whole group, output capped.
 */
import { spawnGroup } from "./exec.ts";

export interface ProgramOutput {
  stdout: string;
  stderr: string;
}

export interface RunProgramOptions {
  env: Record<string, string>;
  timeoutMs: number;
  /** Per stream; past it the program is killed and the run fails. */
  maxBytes?: number;
}

export function runProgram(argv: readonly string[], options: RunProgramOptions): Promise<ProgramOutput> {
  const [binary, ...args] = argv;
  if (!binary) return Promise.reject(new Error("runProgram: empty argv"));
  const maxBytes = options.maxBytes ?? 4 << 20;
  return new Promise((resolve, reject) => {
    const group = spawnGroup(binary, args, options.env);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let bytes = 0;
    let why: string | undefined;
    const stop = (reason: string) => {
      why ??= reason;
      group.kill("SIGKILL");
    };
    const timer = setTimeout(() => stop(`timed out after ${options.timeoutMs} ms`), options.timeoutMs);
    const take = (into: Buffer[]) => (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > 2 * maxBytes) return stop(`printed more than ${maxBytes} bytes`);
      into.push(chunk);
    };
    group.child.stdout.on("data", take(out));
    group.child.stderr.on("data", take(err));
    group.child.once("error", (e) => stop(e.message));
    group.child.once("close", (code, signal) => {
      clearTimeout(timer);
      group.reap();
      const stdout = Buffer.concat(out).toString("utf8");
      const stderr = Buffer.concat(err).toString("utf8");
      if (why || code !== 0) {
        const failure = why ?? (signal ? `killed by ${signal}` : `exited with ${code}`);
        return reject(Object.assign(new Error(failure), { stdout, stderr }));
      }
      resolve({ stdout, stderr });
    });
  });
}
