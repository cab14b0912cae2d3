/**
 * A C helper of this folder (zombie-leader.c, own-files-thread.c, bound-only.c) compiled into a temp dir and
 * started: it prints the port it holds on its first line and ends when its stdin closes (or after 60 s).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface CHelper {
  child: ChildProcess;
  pid: number;
  /** The port it printed. */
  port: number;
  /** Close its stdin, wait for it to end, remove its temp dir. */
  stop(): Promise<void>;
}

export async function startCHelper(name: string): Promise<CHelper> {
  const dir = mkdtempSync(join(tmpdir(), `rn-${name}-`));
  let child: ChildProcess | undefined;
  const stop = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((r) => child?.once("exit", r));
      child.stdin?.end();
      await gone;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const exe = join(dir, name);
    const cc = spawnSync("gcc", ["-O2", "-pthread", "-o", exe, join(import.meta.dirname, `${name}.c`)], {
      encoding: "utf8",
    });
    if (cc.status !== 0 || cc.stderr !== "") throw new Error(`gcc ${name}.c: ${cc.stderr || cc.error?.message}`);
    const c = spawn(exe, [], { stdio: ["pipe", "pipe", "inherit"] });
    child = c;
    const port = Number(
      await new Promise<string>((resolve, reject) => {
        c.stdout?.once("data", (d: Buffer) => resolve(d.toString()));
        c.once("exit", (code) => reject(new Error(`${name} exited (${code}) before printing its port`)));
      }),
    );
    return { child: c, pid: c.pid ?? 0, port, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
