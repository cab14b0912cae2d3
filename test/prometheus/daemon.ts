/**
 * Debian's Prometheus and blackbox_exporter as the tests run them: on 127.0.0.1 at a free port, with their own
 * config and data in a temp dir, never the system service; ready when `/-/ready` answers, stopped by PID
 * (SIGTERM, then SIGKILL) and their temp dir removed.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { scaledMs } from "@roadnerd/testkit";
import { request } from "undici";

export interface Daemon {
  url: string;
  dir: string;
  /** What it printed, for a failure message. */
  output(): string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (!address || typeof address === "string") throw new Error("no port");
  return address.port;
}

export async function tempDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Start `binary` with `args(port)` and wait (bounded, scaled to the machine's load) until it is ready. */
export async function startDaemon(binary: string, dir: string, args: (port: number) => string[]): Promise<Daemon> {
  // Installed only for the tests (`setup.sh --tests`): say so instead of a spawn ENOENT.
  const onPath = (process.env.PATH ?? "").split(delimiter).some((d) => d && existsSync(join(d, binary)));
  if (!onPath) throw new Error(`${binary} is not installed: run bash scripts/setup.sh --tests (README)`);
  const port = await freePort();
  const child: ChildProcess = spawn(binary, args(port), { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  let text = "";
  const keep = (chunk: Buffer) => {
    text = (text + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const daemon: Daemon = {
    url,
    dir,
    output: () => text,
    async stop() {
      if (child.exitCode === null && child.signalCode === null && child.pid) {
        process.kill(child.pid, "SIGTERM");
        const killer = setTimeout(
          () => child.pid && child.exitCode === null && process.kill(child.pid, "SIGKILL"),
          5000,
        );
        await exited;
        clearTimeout(killer);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
  const deadline = Date.now() + scaledMs(30_000);
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    const ready = await request(`${url}/-/ready`).then(
      async (r) => {
        await r.body.dump();
        return r.statusCode === 200;
      },
      () => false,
    );
    if (ready) return daemon;
    await delay(100);
  }
  await daemon.stop();
  throw new Error(`${binary} did not become ready:\n${text}`);
}

/** Poll `check` (bounded, scaled) until it returns a value. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + scaledMs(ms);
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    await delay(250);
  }
  throw new Error(`still waiting: ${what}${last ? ` (${String(last)})` : ""}`);
}
