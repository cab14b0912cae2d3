/**
 * Long-lived supervised children (the orchestrator's attached servers): a process that announces itself
 * with a JSON `{"msg":"listening","url":…}` line, run with a scrubbed environment in its own process group,
 * its output drained (a full pipe would stall it), the whole group killed when we stop it or when this
 * process exits, and an exit notification. The spawn itself is exec.ts's (spawnGroup): one place starts processes.
 */
import { DEFAULT_EXEC_PATH } from "../define/config.ts";
import { scrubbedEnv, spawnGroup } from "../exec/exec.ts";
import { SHUTDOWN_FLUSH_MS, SHUTDOWN_GRACE_MS } from "../http/in-flight.ts";

/**
 * Time between SIGTERM and SIGKILL when a supervised child is stopped: past the server's own shutdown (its calls'
 * grace, then their answers' flush) with a second to spare. At 2 s, the grace alone, `up --processes` killed a
 * server just before it answered its own callers E_BUSY (they saw the connection cut) and before its exit hook
 * ran (stop 36's review).
 */
export const SUPERVISE_KILL_GRACE_MS = SHUTDOWN_GRACE_MS + SHUTDOWN_FLUSH_MS + 1000;
export const DEFAULT_LISTEN_TIMEOUT_MS = 10_000;
const TAIL_BYTES = 8192;

export interface SuperviseOptions {
  /** Added to a scrubbed environment (PATH, LC_ALL=C, LANG=C, TZ=UTC); nothing else is inherited. */
  env?: Readonly<Record<string, string>>;
  /** How long to wait for the listening line before the child is killed (default 10 s). */
  listenTimeoutMs?: number;
  /** Called once when the child exits, for whatever reason. */
  onExit?: (exit: SupervisedExit) => void;
}

export interface SupervisedExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** How a child ended, in a word: its signal (SIGKILL…) or `code N`. */
export const exitText = (exit: SupervisedExit): string => exit.signal ?? `code ${exit.code}`;

export interface Supervised {
  pid: number;
  /** The URL from its listening line. */
  url: string;
  alive(): boolean;
  /** Resolves when the child has exited. */
  exited: Promise<SupervisedExit>;
  /** The last lines it wrote on stderr (for error messages). */
  stderrTail(): string;
  /** SIGTERM to the group, SIGKILL after the grace time; resolves on exit. */
  stop(graceMs?: number): Promise<void>;
}

export class SuperviseError extends Error {
  readonly phase: "spawn" | "exit" | "timeout";
  constructor(phase: "spawn" | "exit" | "timeout", message: string) {
    super(message);
    this.name = "SuperviseError";
    this.phase = phase;
  }
}

/** Supervised children still running (their group ids). */
const live = new Set<number>();

/** How many supervised children are alive (for tests and shutdown checks). */
export function liveSupervised(): number {
  return live.size;
}

/** Start `argv` and resolve once it logs its listening line; a child that exits or stalls first is killed. */
export async function superviseListening(argv: readonly string[], options: SuperviseOptions = {}): Promise<Supervised> {
  const [binary, ...args] = argv;
  if (!binary) throw new SuperviseError("spawn", "empty argv");
  const label = argv.join(" ").slice(0, 160);
  // ROADNERD_PARENT_PID: the child ends itself if we end without stopping it (setpriv's death signal covers a
  // SIGKILL of ours, ADR 0051).
  const group = await spawnGroup(
    binary,
    args,
    scrubbedEnv(DEFAULT_EXEC_PATH, { ROADNERD_PARENT_PID: String(process.pid), ...options.env }),
  ).catch((err: Error) => {
    throw new SuperviseError("spawn", `${label} could not start: ${err.message}`);
  });
  const { child, pgid } = group;
  live.add(pgid);
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-TAIL_BYTES);
  });
  const exited = new Promise<SupervisedExit>((resolve) => {
    child.once("close", (code, signal) => {
      // The leader is gone; nothing it started lives on.
      group.reap();
      live.delete(pgid);
      const exit = { code, signal };
      options.onExit?.(exit);
      resolve(exit);
    });
  });
  const stop = (graceMs = SUPERVISE_KILL_GRACE_MS): Promise<void> => {
    if (!live.has(pgid)) return exited.then(() => undefined);
    group.kill("SIGTERM");
    const timer = setTimeout(() => group.kill("SIGKILL"), graceMs);
    timer.unref();
    return exited.then(() => clearTimeout(timer));
  };
  return new Promise<Supervised>((resolve, reject) => {
    let buf = "";
    let settled = false;
    const fail = (err: SuperviseError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void stop(0);
      reject(err);
    };
    const timeoutMs = options.listenTimeoutMs ?? DEFAULT_LISTEN_TIMEOUT_MS;
    const timer = setTimeout(
      () => fail(new SuperviseError("timeout", `${label} did not listen within ${timeoutMs} ms`)),
      timeoutMs,
    );
    void exited.then((e) =>
      fail(
        new SuperviseError(
          "exit",
          `${label} exited (${exitText(e)}) before listening; stderr: ${stderr.trim().slice(-400)}`,
        ),
      ),
    );
    child.stdout?.on("data", (d: Buffer) => {
      if (settled) return; // Keep draining; only the first lines matter.
      buf += d.toString();
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const url = listeningUrl(line);
        if (url) {
          settled = true;
          clearTimeout(timer);
          resolve({
            pid: pgid,
            url,
            alive: () => live.has(pgid),
            exited,
            stderrTail: () => stderr,
            stop,
          });
          return;
        }
      }
      if (buf.length > TAIL_BYTES) buf = buf.slice(-TAIL_BYTES);
    });
  });
}

function listeningUrl(line: string): string | undefined {
  try {
    const rec = JSON.parse(line) as { msg?: unknown; url?: unknown };
    return rec.msg === "listening" && typeof rec.url === "string" ? rec.url : undefined;
  } catch {
    return undefined;
  }
}
