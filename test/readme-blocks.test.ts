/**
 * Every command line of the root README runs here as a person types it, or is named as not run with why:
 * each shell block's lines in order, section by section, in a copy of the repository with this checkout's
 * bundles (what `bash scripts/setup.sh` leaves), inside a network namespace of the test's own (loopback, with
 * 10.0.0.2 on it for the fleet's examples), so default ports never meet another test's. A line that serves
 * until stopped (`pnpm start`, a server) is started, must say it is listening and answer /healthz, and stays
 * up for the lines after it until the next such line or the section's end, when it is stopped as Ctrl-C
 * would. The servers' curl lines are run by test/server-readmes.test.ts; the compose lines by test/containers
 * (CI's containers stage), which reads them from the README; the fleet's hosts file (JSON) is written as shown
 * (tokens filled in) and read by a real gateway. `/etc/roadnerd` is a folder of the test's.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { curlExamples } from "@roadnerd/conventions/testing";
import { REPO_ROOT } from "@roadnerd/registry";
import { scaledMs } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { KUBERNETES_FILE } from "../scripts/lib/kubernetes.ts";
import { commandLines, type ReadmeBlock, readmeBlocks, readmeComposeSteps, SHELL_LANGS } from "./lib/readme-blocks.ts";
import { copyOfRepo, type Run, removeCopies } from "./lib/repo-copy.ts";

/** Lines the README leaves to a person (registries, a cluster, the whole suite): few, each with its reason. */
const MAX_NOT_RUN = 10;
const FLEET_ADDRESS = "10.0.0.2";

const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
const blocks = readmeBlocks(readme);
const shellBlocks = blocks.filter((b) => SHELL_LANGS.includes(b.lang));
/** The servers' curl lines, which test/server-readmes.test.ts runs against live servers. */
const curlLines = new Set(curlExamples(readme).flatMap((e) => commandLines(e.line)));
const isNotRun = (b: ReadmeBlock, line: string) => b.notRun.some((n) => n.line === line);
const isHostsFile = (b: ReadmeBlock) => b.lang === "json" && /"servers"[\s\S]*"token"/.test(b.body);

/** A line that serves until it is stopped; `--stdio` ends with its input. */
const serves = (line: string) =>
  !line.includes("--stdio") &&
  /^(\w+=\S+ )*(pnpm start|node \S+\/dist\/main\.js)( |$)|(^| )roadnerd-[a-z-]+$/.test(line);

describe("README shell blocks: every line run or named", () => {
  it("each line not run is named before its block, says why, and they are few", () => {
    const notRun = shellBlocks.flatMap((b) => b.notRun.map((n) => ({ ...n, lines: b.lines })));
    expect(notRun.length).toBeGreaterThan(0);
    expect(notRun.length).toBeLessThanOrEqual(MAX_NOT_RUN);
    for (const n of notRun) {
      expect(n.lines, n.line).toContain(n.line);
      expect(n.why.length, n.line).toBeGreaterThan(10);
    }
  });

  it("the curl lines this file leaves out are the ones test/server-readmes.test.ts runs", () => {
    const curls = shellBlocks.flatMap((b) => b.lines.filter((l) => curlLines.has(l)));
    expect(curls.length).toBeGreaterThanOrEqual(3);
    for (const l of curls) expect(l).toMatch(/^curl .*localhost:71\d\d/);
  });

  it("the compose lines are the ones test/containers runs (it reads them from here)", () => {
    const steps = readmeComposeSteps(readme);
    expect(steps.map((s) => s[0])).toEqual(["up", "ps", "down"]);
    const composeLines = shellBlocks.flatMap((b) => b.lines.filter((l) => l.startsWith("docker compose ")));
    for (const b of shellBlocks) {
      for (const l of composeLines.filter((c) => b.lines.includes(c))) {
        expect(b.notRun.find((n) => n.line === l)?.why, l).toContain("run by test/containers");
      }
    }
    const engine = readFileSync(join(REPO_ROOT, "test/containers/compose.engine.ts"), "utf8");
    expect(engine).toContain("readmeComposeSteps()");
    // No compose command of its own beside the README's, other than clearing leftovers of an earlier run.
    expect([...engine.matchAll(/composeRun\("(\w+)"/g)].map((m) => m[1])).toEqual(["down", "down"]);
  });

  it("the kubectl lines name what the manifest uses, and the file test/kubernetes.test.ts checks", () => {
    const lines = shellBlocks.flatMap((b) => b.lines.filter((l) => l.startsWith("kubectl ")));
    const text = lines.join("\n");
    const namespace = /kubectl create namespace (\S+)/.exec(text)?.[1];
    const [, auth, key] = /create secret generic (\S+) --from-literal=(\w+)=/.exec(text) ?? [];
    const tls = /create secret tls (\S+)/.exec(text)?.[1];
    const file = /kubectl apply -f (\S+)/.exec(text)?.[1];
    expect(file).toBe(KUBERNETES_FILE);
    expect(readFileSync(join(REPO_ROOT, "test/kubernetes.test.ts"), "utf8")).toContain("KUBERNETES_FILE");
    const manifest = JSON.stringify(
      parseAllDocuments(readFileSync(join(REPO_ROOT, KUBERNETES_FILE), "utf8")).map((d) => d.toJS()),
    );
    expect(manifest).toContain(`"namespace":"${namespace}"`);
    expect(manifest).toContain(`"secretKeyRef":{"name":"${auth}","key":"${key}"}`);
    expect(manifest).toContain(`"secretName":"${tls}"`);
    for (const l of lines)
      expect(
        shellBlocks.some((b) => isNotRun(b, l)),
        l,
      ).toBe(true);
  });
});

// ——— running them ———

let repo = "";
let holder: ChildProcess | undefined;
let env: Record<string, string> = {};
const serving: Array<{ line: string; child: ChildProcess; out: () => string; exited: Promise<void> }> = [];

/** A shell line inside the test's namespace, in the copy, with /etc/roadnerd as the test's folder. */
function inNamespace(line: string): string[] {
  const pid = String(holder?.pid);
  return ["-t", pid, "-n", "sh", "-c", line.replaceAll("/etc/roadnerd", join(repo, "etc-roadnerd"))];
}

function run(line: string): Promise<Run> {
  return new Promise((resolve) => {
    // Its own process group, so a line that never ends is ended whole (a server left behind would keep running).
    // `roadnerd call`'s deadline as the machine has it now: a spawned `ip` can pass 2 s at load 25 on 2 cores.
    const deadline = { ROADNERD_TIMEOUT_MS: String(Math.min(15_000, scaledMs(2000))) };
    const child = spawn("nsenter", inNamespace(line), { cwd: repo, env: { ...env, ...deadline }, detached: true });
    let out = "";
    const collect = (d: Buffer) => {
      if (out.length < 16 << 20) out += d.toString();
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    const timer = setTimeout(() => child.pid && process.kill(-child.pid, "SIGKILL"), scaledMs(120_000));
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), out });
    });
    // A terminal's input ends where the line does: `--stdio` serves until its input closes.
    child.stdin?.end();
  });
}

const until = async (done: () => boolean, ms: number) => {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
};

/** Start a serving line; it must say it listens, and each http:// address it names must answer /healthz. */
async function start(line: string): Promise<void> {
  const child = spawn("nsenter", inNamespace(line), {
    cwd: repo,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  serving.push({ line, child, out: () => out, exited });
  const ready = () => /"msg":"listening"|gateway \(MCP\)/.test(out) || child.exitCode !== null;
  await until(ready, scaledMs(120_000));
  expect(child.exitCode, `${line}\n${out.slice(-3000)}`).toBeNull();
  expect(ready(), `${line} never said it listens:\n${out.slice(-3000)}`).toBe(true);
  const origins = new Set([...out.matchAll(/https?:\/\/[\w.]+:[1-9]\d*/g)].map((m) => m[0]));
  expect(origins.size, out).toBeGreaterThan(0);
  // An https:// server is called with its CA and client certificate by the README's own next line.
  for (const origin of [...origins].filter((o) => o.startsWith("http:"))) {
    const r = await run(`curl -sf ${origin}/healthz`);
    expect(r.out, `${line}: ${origin}/healthz`).toContain('"ok":true');
  }
}

/** Stop what serves as a person would (Ctrl-C reaches the group); each must end and say so. */
async function stopServing(): Promise<void> {
  for (const s of serving.splice(0)) {
    if (s.child.pid && s.child.exitCode === null) process.kill(-s.child.pid, "SIGINT");
    await Promise.race([s.exited, new Promise((r) => setTimeout(r, scaledMs(30_000)))]);
    const stopped = s.child.exitCode !== null || s.child.signalCode !== null;
    if (!stopped && s.child.pid) process.kill(-s.child.pid, "SIGKILL");
    expect(stopped, `${s.line} did not stop`).toBe(true);
    expect(s.out(), s.line).toMatch(/stopped\.|"msg":"closing"/);
  }
}

beforeAll(async () => {
  repo = await copyOfRepo({ built: true });
  mkdirSync(join(repo, "etc-roadnerd"));
  env = {
    ...Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined)),
    // As after `npm install -g` of the packages: their bins on PATH.
    PATH: `${join(repo, "node_modules/.bin")}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    XDG_STATE_HOME: join(repo, ".state"),
  };
  holder = spawn(
    "unshare",
    [
      "--net",
      "--",
      "sh",
      "-c",
      `ip link set lo up && ip addr add ${FLEET_ADDRESS}/32 dev lo && echo up && exec sleep 3600`,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let said = "";
  holder.stdout?.on("data", (d: Buffer) => {
    said += d.toString();
  });
  await until(() => said.includes("up") || holder?.exitCode !== null, scaledMs(10_000));
  expect(said).toContain("up");
}, scaledMs(600_000));

afterAll(async () => {
  await stopServing().catch(() => undefined);
  holder?.kill();
  removeCopies();
});

/** The README's hosts file as a user fills it in: each `"token": "…"` is the token the fleet's servers run with. */
function writeHostsFile(block: ReadmeBlock): string {
  const token = readFileSync(join(repo, "token"), "utf8").trim();
  const file = join(repo, "hosts.json");
  writeFileSync(file, block.body.replace(/"token": "…[^"]*"/g, `"token": "${token}"`));
  return file;
}

/** A real gateway over stdio, in the namespace, reading the hosts file: laptop-a's network answers through it. */
async function gatewayWithHosts(hostsFile: string): Promise<void> {
  const client = new Client({ name: "readme-blocks", version: "1.0.0" });
  const args = inNamespace("").slice(0, 3);
  await client.connect(
    new StdioClientTransport({
      command: "nsenter",
      args: [...args, process.execPath, join(repo, "packages/orchestrator/dist/main.js"), "mcp"],
      cwd: repo,
      env: { ...env, ROADNERD_HOSTS: hostsFile },
      stderr: "ignore",
    }),
  );
  try {
    const hosts = await client.callTool({ name: "hosts", arguments: {} });
    const laptop = (hosts.structuredContent as { hosts: Array<{ host: string; servers: unknown[] }> }).hosts.find(
      (h) => h.host === "laptop-a",
    );
    expect(laptop?.servers, JSON.stringify(hosts)).toContainEqual(
      expect.objectContaining({ server: "network", ok: true }),
    );
    const r = await client.callTool({ name: "network__iface_info", arguments: { host: "laptop-a" } });
    expect(r.isError, JSON.stringify(r)).toBeFalsy();
    expect(JSON.stringify(r.structuredContent)).toContain(FLEET_ADDRESS);
  } finally {
    await client.close();
  }
}

const sections = [...new Set(blocks.map((b) => b.section))].filter((s) =>
  blocks.some((b) => b.section === s && (isHostsFile(b) || b.lines.some((l) => !isNotRun(b, l) && !curlLines.has(l)))),
);

describe("README shell blocks, run as written", () => {
  it("there is something to run in the sections that show commands", () => {
    expect(sections).toEqual(expect.arrayContaining(["Run it", "Start one server", "A fleet behind one gateway"]));
  });

  it.each(sections)(
    "%s",
    async (section) => {
      try {
        for (const block of blocks.filter((b) => b.section === section)) {
          if (isHostsFile(block)) await gatewayWithHosts(writeHostsFile(block));
          for (const line of block.lines) {
            if (isNotRun(block, line) || curlLines.has(line)) continue;
            if (serves(line)) {
              await stopServing();
              await start(line);
              continue;
            }
            const r = await run(line);
            expect(r.code, `${line}\n${r.out.slice(-3000)}`).toBe(0);
          }
        }
      } finally {
        await stopServing();
      }
      if (section.startsWith("A fleet")) expect(existsSync(join(repo, "etc-roadnerd/tls.key"))).toBe(true);
    },
    scaledMs(600_000),
  );
});
