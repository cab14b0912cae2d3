/** Spawn a built server (servers/<name>/dist/main.js) on port 0 and wait for its "listening" log line. */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

export function serverEntry(name: string): string {
  const entry = `${REPO_ROOT}servers/${name}/dist/main.js`;
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`pnpm build\` first`);
  return entry;
}

export interface SpawnedServer {
  url: string;
  pid: number;
  child: ChildProcess;
  /** Every stdout line so far (JSON log lines). */
  lines: string[];
  /** The AUTH_TOKEN it runs with, if any (pass it to createClient). */
  token: string | undefined;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  env?: Record<string, string>;
  /** Prefix the command, e.g. ["ip", "netns", "exec", "rn-ns1"]. */
  wrap?: string[];
  args?: string[];
  timeoutMs?: number;
}

export async function spawnServer(name: string, options: SpawnOptions = {}): Promise<SpawnedServer> {
  const cmd = [...(options.wrap ?? []), process.execPath, serverEntry(name), ...(options.args ?? [])];
  const child = spawn(cmd[0] as string, cmd.slice(1), {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const started = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} did not start in time; stderr: ${stderr}`)),
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
      reject(new Error(`${name} exited with ${code} before listening; stderr: ${stderr}`));
    });
  });
  let url: string;
  try {
    url = await started;
  } catch (err) {
    // Never leave a half-started server behind.
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    throw err;
  }
  return {
    url,
    pid: child.pid as number,
    child,
    lines,
    token: options.env?.AUTH_TOKEN,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 2000).unref();
      }),
  };
}
