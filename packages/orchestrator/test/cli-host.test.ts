/**
 * `roadnerd call --host` and `roadnerd triage --host`: another machine of ROADNERD_HOSTS, as the gateway's
 * `host` argument (ADR 0031). The "host" here is a built network server on 127.0.0.1:0 named in a hosts file;
 * its own metrics show the calls reached it, and the CLI spawned no server of its own. An unknown name is a
 * usage error (exit 2) that lists the hosts there are.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "@roadnerd/registry";
import { type SpawnedServer, scaledMs, spawnServer } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const BIN = join(REPO_ROOT, "packages/orchestrator/dist/main.js");
let dir = "";
let box: SpawnedServer;
let env: Record<string, string> = {};

function roadnerd(args: string[], extra: Record<string, string> = env) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...extra }, timeout: scaledMs(120_000) },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** How many calls of `tool` the box's server answered, from its own /metrics. */
async function callsOn(tool: string): Promise<number> {
  const text = await (await fetch(`${box.url}/metrics`)).text();
  return [...text.matchAll(new RegExp(`^roadnerd_tool_calls_total\\{[^}]*tool="${tool}"[^}]*\\} (\\d+)`, "gm"))]
    .map((m) => Number(m[1]))
    .reduce((a, b) => a + b, 0);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rn-cli-host-"));
  box = await spawnServer("network");
  const hosts = join(dir, "hosts.json");
  await writeFile(hosts, JSON.stringify({ box: { servers: { network: box.url } } }));
  env = {
    ROADNERD_HOSTS: hosts,
    ROADNERD_LOG_DIR: dir,
    ROADNERD_ATTACH_TIMEOUT_MS: String(Math.min(120_000, scaledMs(30_000))),
  };
});

afterAll(async () => {
  await box?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("roadnerd call / triage --host", () => {
  it("call --host box: the box's server answers; no server of this machine is started", async () => {
    const before = await callsOn("iface_info");
    const r = await roadnerd(["call", "--host", "box", "network/iface_info", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveProperty("interfaces");
    expect(await callsOn("iface_info")).toBe(before + 1);
    expect(r.stderr).not.toMatch(/pid \d+/);
  });

  it("triage --host box: every step goes to the box's servers", async () => {
    const before = await callsOn("route_info");
    const r = await roadnerd(["triage", "--host", "box", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { label: string; steps: number };
    expect(report.steps).toBeGreaterThan(0);
    expect(await callsOn("route_info")).toBeGreaterThan(before);
    expect(r.stderr).toContain("on box");
    expect(r.stderr).not.toMatch(/pid \d+/);
  });

  it("--host local is this machine, as the gateway's default", async () => {
    const before = await callsOn("iface_info");
    const r = await roadnerd(["call", "--host", "local", "network/iface_info", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(await callsOn("iface_info")).toBe(before);
  });

  it("an unknown host: exit 2 and one line listing the hosts; with --json as the error object", async () => {
    const r = await roadnerd(["call", "--host", "nobox", "network/iface_info"]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe("--host: no host nobox (hosts: local, box) (roadnerd --help for usage)");
    const t = await roadnerd(["triage", "--host", "nobox", "--json"]);
    expect(t.code).toBe(2);
    expect(JSON.parse(t.stdout)).toMatchObject({ error: { code: "E_USAGE", message: expect.stringContaining("box") } });
    const none = await roadnerd(["call", "--host", "nobox", "network/iface_info"], {});
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("(hosts: local; ROADNERD_HOSTS names the others)");
  });

  it("--host is not a flag of list, and needs a value", async () => {
    expect((await roadnerd(["list", "--host", "box"])).code).toBe(2);
    expect((await roadnerd(["call", "network/iface_info", "--host"])).code).toBe(2);
  });
});
