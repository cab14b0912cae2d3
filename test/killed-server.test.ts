/**
 * A SIGKILLed server leaves no subprocess behind (issue 18, A10; ADR 0051). SIGKILL runs no exit hook and each
 * child has its own process group, so before this every command in flight lived on (a `journalctl --follow` for
 * as long as it liked). Each built server below runs a fake command that records its pid and sleeps: a tool call
 * (network's `ip`) and a follow stream (service's `journalctl --follow`); the server is SIGKILLed by pid and both
 * children must be gone within a scaled deadline.
 * The same for `roadnerd up`, which hosts both servers in one process.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fakeBinaries, isLive } from "@roadnerd/conventions/testing";
import { REPO_ROOT } from "@roadnerd/registry";
import { pollUntil } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** Each fake writes `pid.<binary>.<its pid>` and sleeps (exec: the pid stays the sleeper's). */
const HOLD = (b: string) => `: > "$(/usr/bin/dirname "$0")/pid.${b}.$$"; exec /bin/sleep 300`;

let bin: { dir: string; cleanup(): Promise<void> };
const started: ChildProcess[] = [];

beforeAll(async () => {
  bin = await fakeBinaries({ ip: HOLD("ip"), journalctl: HOLD("journalctl"), systemctl: HOLD("systemctl") });
});
afterAll(async () => {
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  // Whatever the servers left (on main: everything) is ours to end.
  for (const pid of heldPids()) if (isLive(pid)) process.kill(pid, "SIGKILL");
  await bin?.cleanup();
});

/** Pids of the fake commands started so far, by binary. */
function heldPids(binary?: string): number[] {
  return readdirSync(bin.dir)
    .filter((n) => n.startsWith(binary ? `pid.${binary}.` : "pid."))
    .map((n) => Number(n.slice(n.lastIndexOf(".") + 1)));
}

/** A child process's stdout as lines, and its stderr as text. */
function output(child: ChildProcess): { out: () => string; err: () => string } {
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  return { out: () => out, err: () => err };
}

/** Start a held tool call on network and a held follow stream on service; resolve with their children's pids. */
async function holdBoth(networkUrl: string, serviceUrl: string): Promise<{ ip: number; journalctl: number }> {
  // The earlier tests' fakes (ended) stay listed: this call's are the new ones. (Taking the last listed was
  // readdir's order, not the newest: CI once picked an ended one.)
  const before = new Set(heldPids());
  const fresh = (binary: string) => heldPids(binary).filter((pid) => !before.has(pid));
  // Neither is awaited: the server dies under them.
  void fetch(`${networkUrl}/actions/iface_info`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ timeout_ms: 15_000 }),
  }).catch(() => undefined);
  void fetch(`${serviceUrl}/sse/journal_follow?name=ssh`)
    .then((r) => r.body?.getReader().read())
    .catch(() => undefined);
  const ok = await pollUntil(() => fresh("ip").length > 0 && fresh("journalctl").length > 0, 20_000);
  expect(ok, "the fake ip and journalctl did not start").toBe(true);
  const ip = fresh("ip")[0] ?? 0;
  const journalctl = fresh("journalctl")[0] ?? 0;
  expect(isLive(ip) && isLive(journalctl)).toBe(true);
  return { ip, journalctl };
}

async function killAndCheck(child: ChildProcess, held: { ip: number; journalctl: number }): Promise<void> {
  const exited = once(child, "exit");
  process.kill(child.pid ?? 0, "SIGKILL");
  await exited;
  const gone = await pollUntil(() => !isLive(held.ip) && !isLive(held.journalctl), 5000);
  expect({ ip: isLive(held.ip), journalctl: isLive(held.journalctl) }, "children alive after SIGKILL").toEqual({
    ip: false,
    journalctl: false,
  });
  expect(gone).toBe(true);
}

const BASE_ENV = { PATH: "/usr/bin:/bin", HOST: "127.0.0.1", PORT: "0", OUTBOUND_ALLOW: "127.0.0.1" };

function startBuilt(name: "network" | "service"): { child: ChildProcess; url: () => string | undefined } {
  const child = spawn(process.execPath, [join(REPO_ROOT, `servers/${name}/dist/main.js`)], {
    env: { ...BASE_ENV, EXEC_PATH: bin.dir, SYSTEMD_BOOTED_DIR: bin.dir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.push(child);
  const { out } = output(child);
  const url = () =>
    out()
      .split("\n")
      .map((l) => {
        try {
          return JSON.parse(l) as { msg?: string; url?: string };
        } catch {
          return {};
        }
      })
      .find((l) => l.msg === "listening")?.url;
  return { child, url };
}

describe("a SIGKILLed server leaves no subprocess", () => {
  it("each built server, its own process: the tool call's and the follow stream's children die with it", async () => {
    const network = startBuilt("network");
    const service = startBuilt("service");
    expect(await pollUntil(() => !!network.url() && !!service.url(), 30_000)).toBe(true);
    // One kill per server: each holds one child, the other one's keeps running until its own server dies.
    const held = await holdBoth(network.url() ?? "", service.url() ?? "");
    const ipExit = once(network.child, "exit");
    process.kill(network.child.pid ?? 0, "SIGKILL");
    await ipExit;
    expect(await pollUntil(() => !isLive(held.ip), 5000)).toBe(true);
    expect(isLive(held.journalctl)).toBe(true);
    const jExit = once(service.child, "exit");
    process.kill(service.child.pid ?? 0, "SIGKILL");
    await jExit;
    expect(await pollUntil(() => !isLive(held.journalctl), 5000)).toBe(true);
  }, 120_000);

  it("roadnerd up (every server in one process): SIGKILL by pid ends both children", async () => {
    const up = spawn(
      process.execPath,
      [join(REPO_ROOT, "packages/orchestrator/dist/main.js"), "up", "network", "service", "--port", "0"],
      {
        env: {
          PATH: "/usr/bin:/bin",
          ROADNERD_ATTACH_TIMEOUT_MS: "120000",
          // Ports the kernel picks: the table below names them.
          ROADNERD_NETWORK_PORT: "0",
          ROADNERD_SERVICE_PORT: "0",
          ROADNERD_NETWORK_EXEC_PATH: bin.dir,
          ROADNERD_SERVICE_EXEC_PATH: bin.dir,
          ROADNERD_SERVICE_SYSTEMD_BOOTED_DIR: bin.dir,
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    started.push(up);
    const { out, err } = output(up);
    const row = (name: string) =>
      out()
        .split("\n")
        .find((l) => l.startsWith(name))
        ?.trim()
        .split(/\s{2,}/);
    expect(await pollUntil(() => out().includes("gateway (MCP)"), 60_000), err()).toBe(true);
    const [, networkUrl, networkPid] = row("network") ?? [];
    const [, serviceUrl] = row("service") ?? [];
    // One process: the servers' pid is up's own.
    expect(Number(networkPid)).toBe(up.pid);
    const held = await holdBoth(networkUrl ?? "", serviceUrl ?? "");
    await killAndCheck(up, held);
  }, 180_000);
});
