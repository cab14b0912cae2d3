/** Spawn a process that logs a JSON "listening" line with its url (a built server), and wait for that line. */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./repo-root.ts";

export function serverEntry(name: string): string {
  const entry = join(REPO_ROOT, "servers", name, "dist/main.js");
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`pnpm build\` first`);
  return entry;
}

export interface ListeningProcess {
  url: string;
  pid: number;
  child: ChildProcess;
  /** Every stdout line so far (JSON log lines). */
  lines: string[];
  /** SIGTERM, SIGKILL after 2 s; resolves on exit. */
  stop(): Promise<void>;
}

export interface ListenOptions {
  /** Added to a clean environment: PATH, HOST=127.0.0.1, PORT=0 (nothing else from the caller's shell). */
  env?: Record<string, string>;
  timeoutMs?: number;
}

/** Start `cmd` and resolve once it logs `{"msg":"listening","url":…}`; a process that exits or stalls first is killed. */
export async function spawnListening(cmd: readonly string[], options: ListenOptions = {}): Promise<ListeningProcess> {
  const child = spawn(cmd[0] as string, cmd.slice(1), {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOST: "127.0.0.1", PORT: "0", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const label = cmd.join(" ").slice(0, 120);
  const lines: string[] = [];
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    if (stderr.length < 16_384) stderr += d.toString();
  });
  const started = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${label} did not start in time; stderr: ${stderr}`)),
      options.timeoutMs ?? 15_000,
    );
    let buf = "";
    child.stdout?.on("data", (d: Buffer) => {
      buf += d.toString();
      let nl = buf.indexOf("\n");
      while (nl >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        lines.push(line);
        try {
          const rec = JSON.parse(line) as { msg?: string; url?: string };
          if (rec.msg === "listening" && rec.url) {
            clearTimeout(timer);
            resolve(rec.url);
          }
        } catch {}
        nl = buf.indexOf("\n");
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with ${code} before listening; stderr: ${stderr}`));
    });
  });
  let url: string;
  try {
    url = await started;
  } catch (err) {
    // Never leave a half-started process behind.
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    throw err;
  }
  return {
    url,
    pid: child.pid as number,
    child,
    lines,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 2000).unref();
      }),
  };
}

export interface SpawnedServer extends ListeningProcess {
  /** The AUTH_TOKEN it runs with, if any (pass it to createClient). */
  token: string | undefined;
}

export interface SpawnOptions extends ListenOptions {
  /** Prefix the command, e.g. ["ip", "netns", "exec", "rn-ns1"]. */
  wrap?: string[];
  args?: string[];
}

/** A built server (servers/<name>/dist/main.js) on port 0, logging at info. */
export async function spawnServer(name: string, options: SpawnOptions = {}): Promise<SpawnedServer> {
  const cmd = [...(options.wrap ?? []), process.execPath, serverEntry(name), ...(options.args ?? [])];
  const server = await spawnListening(cmd, { ...options, env: { LOG_LEVEL: "info", ...options.env } });
  return { ...server, token: options.env?.AUTH_TOKEN };
}
