/** Spawn a process that logs a JSON "listening" line with its url (a built server), and wait for that line. */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { chmod, copyFile, cp, link, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
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
  /**
   * `wrap` runs it as another user (e.g. `setpriv --reuid=65534`): start it from a copy that user can reach
   * (see unprivilegedCopy), removed when it stops.
   */
  otherUser?: boolean;
}

/** A built server (servers/<name>/dist/main.js) on port 0, logging at info. */
export async function spawnServer(name: string, options: SpawnOptions = {}): Promise<SpawnedServer> {
  const copy = options.otherUser ? await unprivilegedCopy(name) : undefined;
  const node = copy?.node ?? process.execPath;
  const entry = copy?.entry ?? serverEntry(name);
  const cmd = [...(options.wrap ?? []), node, entry, ...(options.args ?? [])];
  let server: ListeningProcess;
  try {
    server = await spawnListening(cmd, { ...options, env: { LOG_LEVEL: "info", ...options.env } });
  } catch (err) {
    await copy?.cleanup();
    throw err;
  }
  const stop = async () => {
    await server.stop();
    await copy?.cleanup();
  };
  return { ...server, stop, token: options.env?.AUTH_TOKEN };
}

/** Others (a user with no rights of its own) may read and run the file itself. */
const othersMayRun = (path: string) => (statSync(path).mode & 0o005) === 0o005;

/** Others can also reach it: every directory on its path lets them through. */
function othersReach(path: string): boolean {
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return false;
    if (dir === dirname(dir)) return true;
  }
}

export interface UnprivilegedCopy {
  /** This Node, or a link to it where another user can reach it. */
  node: string;
  entry: string;
  cleanup(): Promise<void>;
}

/**
 * A server's built bundle copied to a world-readable temp dir, so a test can run it as an unprivileged user
 * wherever the checkout is: inside a 0700 directory (a root user's home, /root/…) that user could not reach
 * dist/main.js, nor a Node fetched into the checkout (.tools/node24). The bundle is self-contained.
 */
export async function unprivilegedCopy(name: string): Promise<UnprivilegedCopy> {
  const entry = serverEntry(name);
  // mkdtemp makes it 0700: opened to others below, its contents only ever read.
  const dir = await mkdtemp(join(tmpdir(), `rn-${name}-bundle-`));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  try {
    await chmod(dir, 0o755);
    await cp(dirname(entry), join(dir, "dist"), { recursive: true });
    const node = process.execPath;
    if (othersMayRun(node) && othersReach(node)) return { node, entry: join(dir, "dist", "main.js"), cleanup };
    const here = join(dir, "node");
    if (othersMayRun(node)) {
      // A hard link costs nothing (the same file, now on a path others can walk); across filesystems, a copy.
      await link(node, here).catch(() => copyFile(node, here));
    } else {
      await copyFile(node, here);
      await chmod(here, 0o755);
    }
    return { node: here, entry: join(dir, "dist", "main.js"), cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
