/**
 * Run a program the orchestrator itself chose (its own bin inside a test network namespace, for `roadnerd
 * eval`), not a tool's command: the kernel's one spawn (own process group, tracked, reaped), the given
 * environment only, a deadline that kills the whole group, output capped.
 */
import { spawnGroup } from "../exec/exec.ts";

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

export async function runProgram(argv: readonly string[], options: RunProgramOptions): Promise<ProgramOutput> {
  const [binary, ...args] = argv;
  if (!binary) throw new Error("runProgram: empty argv");
  const maxBytes = options.maxBytes ?? 4 << 20;
  const group = await spawnGroup(binary, args, options.env).catch((e: Error) => {
    throw Object.assign(new Error(e.message), { stdout: "", stderr: "" });
  });
  return new Promise((resolve, reject) => {
    // Text: the helper relays the output decoded (exec-relay.ts).
    const out: string[] = [];
    const err: string[] = [];
    let bytes = 0;
    let why: string | undefined;
    const stop = (reason: string) => {
      why ??= reason;
      group.kill("SIGKILL");
    };
    const timer = setTimeout(() => stop(`timed out after ${options.timeoutMs} ms`), options.timeoutMs);
    const take = (into: string[]) => (chunk: string) => {
      bytes += Buffer.byteLength(chunk);
      if (bytes > 2 * maxBytes) return stop(`printed more than ${maxBytes} bytes`);
      into.push(chunk);
    };
    group.child.stdout.on("data", take(out));
    group.child.stderr.on("data", take(err));
    group.child.once("close", (code, signal) => {
      clearTimeout(timer);
      group.reap();
      const stdout = out.join("");
      const stderr = err.join("");
      if (why || code !== 0) {
        const failure = why ?? (signal ? `killed by ${signal}` : `exited with ${code}`);
        return reject(Object.assign(new Error(failure), { stdout, stderr }));
      }
      resolve({ stdout, stderr });
    });
  });
}
