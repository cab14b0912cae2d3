/**
 * The README's first command as a newcomer meets it, in a copy of the checkout with nothing built (setup.sh
 * itself needs Debian's and npm's registries: CI's first stage runs it; its `pnpm install` is the copy's, offline):
 * `pnpm pack:npm` before any build refuses in one line that says the fix; `pnpm start` builds and serves, and
 * `ps` shows it as the process the README says to signal, which then stops it all; right after that, with
 * nothing else run, every stdio client entry of the README answers a tools/call. `pnpm start` and the entries
 * run in network namespaces of their own: the default ports are theirs, and no server another test runs on
 * 7101 can answer in place of the copy's own bundles.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pollUntil, scaledMs } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readmeBlocks, readRootReadme, SHELL_LANGS } from "./lib/readme-blocks.ts";
import { readmeStdioEntries, runEntry } from "./lib/readme-clients.ts";
import { copyOfRepo, removeCopies, STORE, sh } from "./lib/repo-copy.ts";

const readme = readRootReadme();
const SETUP = "bash scripts/setup.sh && ";
/** The README's first command: its first shell block's first line. */
const firstBlock = readmeBlocks(readme).find((b) => SHELL_LANGS.includes(b.lang));
const firstLine = firstBlock?.lines[0] ?? "";
/** What the README says to signal to stop `pnpm start` from a script. */
const signalled = /signal the `([^`]+)` process/.exec(readme)?.[1] ?? "";

/** argv that runs `argv` in a network namespace of its own with only `lo`, up. */
const ownNamespace = ["unshare", "--net", "--", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"];

let repo = "";
let home = "";
let start: ChildProcess | undefined;
let said = "";
let exited: Promise<void> = Promise.resolve();

/** pid → args of every process in `pgid` (ps lists the whole machine; one group is this test's). */
function groupProcesses(pgid: number): Array<{ pid: number; args: string }> {
  const lines = execFileSync("ps", ["-eo", "pid=,pgid=,args="], { encoding: "utf8" }).split("\n");
  return lines.flatMap((l) => {
    const m = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l);
    return m && Number(m[2]) === pgid ? [{ pid: Number(m[1]), args: (m[3] ?? "").trim() }] : [];
  });
}

beforeAll(async () => {
  repo = await copyOfRepo();
  home = mkdtempSync(join(tmpdir(), "rn-first-"));
}, scaledMs(300_000));

afterAll(() => {
  if (start?.pid && start.exitCode === null && start.signalCode === null) process.kill(-start.pid, "SIGKILL");
  rmSync(home, { recursive: true, force: true });
  removeCopies();
});

describe("the README's first command, in a copy with nothing built", () => {
  it("is setup, then `pnpm start`, and the line not run names this file", () => {
    expect(firstLine).toBe(`${SETUP}pnpm start`);
    expect(firstBlock?.notRun.find((n) => n.line === firstLine)?.why).toContain("test/first-command.test.ts");
    expect(existsSync(join(repo, "servers/network/dist"))).toBe(false);
    expect(existsSync(join(repo, "packages/orchestrator/dist"))).toBe(false);
  });

  it("`pnpm pack:npm` before a build: one line that says to run `pnpm build`, exit 1, no stack", async () => {
    const r = await sh("pnpm pack:npm", repo);
    expect(r.code, r.out).not.toBe(0);
    const own = r.out.split("\n").filter((l) => l.startsWith("pack:npm:"));
    expect(own, r.out).toHaveLength(1);
    expect(own[0]).toContain("run `pnpm build` first");
    expect(r.out).not.toMatch(/^\s+at /m);
    expect(existsSync(join(repo, ".tools/pack"))).toBe(false);
  });

  it(
    "`pnpm start` builds, serves, shows in ps as the process to signal, and stops when it is signalled",
    async () => {
      expect(signalled).toBe("roadnerd up");
      start = spawn(ownNamespace[0] ?? "", [...ownNamespace.slice(1), "sh", "-c", firstLine.slice(SETUP.length)], {
        cwd: repo,
        env: { ...process.env, npm_config_store_dir: STORE, XDG_STATE_HOME: join(home, "state") },
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      const child = start;
      exited = new Promise<void>((r) => child.once("exit", () => r()));
      const collect = (d: Buffer) => {
        said += d.toString();
      };
      child.stdout?.on("data", collect);
      child.stderr?.on("data", collect);
      await pollUntil(() => /gateway \(MCP\)/.test(said) || child.exitCode !== null, 240_000);
      expect(child.exitCode, said.slice(-3000)).toBeNull();
      expect(said).toMatch(/gateway \(MCP\)/);

      const pgid = child.pid ?? 0;
      const titled = groupProcesses(pgid).filter((p) => p.args === signalled);
      expect(titled, JSON.stringify(groupProcesses(pgid))).toHaveLength(1);
      const pid = titled[0]?.pid;
      // The pid the table prints for the gateway is that process.
      expect(said).toMatch(new RegExp(`gateway \\(MCP\\)\\s+\\S+\\s+${pid}\\b`));

      if (pid) process.kill(pid, "SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, scaledMs(30_000)))]);
      expect(child.exitCode, said.slice(-2000)).toBe(0);
      expect(said).toContain("stopped.");
      await pollUntil(() => groupProcesses(pgid).length === 0, 10_000);
      expect(groupProcesses(pgid)).toEqual([]);
    },
    scaledMs(300_000),
  );

  it.each(readmeStdioEntries(readme).map((s) => [s.client, s.name, s.entry] as const))(
    "then %s: %s answers a tools/call",
    async (_client, _name, entry) => {
      expect(said, "`pnpm start` ran first").toMatch(/gateway \(MCP\)/);
      const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_STATE_HOME: join(home, "state") };
      const { result, called } = await runEntry(entry, repo, home, { wrap: ownNamespace, env });
      expect(result.isError, `${called}: ${JSON.stringify(result)}`).toBeFalsy();
      expect(result.structuredContent, called).toHaveProperty("routes");
    },
    scaledMs(60_000),
  );
});
