// The npm packages people install (scripts/pack.ts) and the client entries the README shows
// (scripts/lib/client-configs.ts): packed from the built bundles, installed into an empty directory with an
// empty npm cache and no registry (the run is sealed), then each client's command line started and asked for
// its tools. Needs `pnpm build` first, as `pnpm test` does.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { REPO_ROOT, readRegistry } from "@roadnerd/registry";
import { scaledMs } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CLI_PACKAGE,
  GATEWAY_URL,
  npxGatewayStdio,
  npxServerStdio,
  type StdioEntry,
} from "../scripts/lib/client-configs.ts";

const PACKS = join(REPO_ROOT, ".tools/pack");
let home = "";
let tarballs: string[] = [];
/** npm as a user with nothing cached and no registry: anything not in the tarballs fails. */
const npmEnv = () => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  npm_config_cache: join(home, ".npm"),
  npm_config_offline: "true",
  npm_config_update_notifier: "false",
});

beforeAll(() => {
  execFileSync(process.execPath, [join(REPO_ROOT, "scripts/run-ts.mjs"), join(REPO_ROOT, "scripts/pack.ts")], {
    stdio: "ignore",
  });
  tarballs = readdirSync(PACKS)
    .filter((f) => f.endsWith(".tgz"))
    .map((f) => join(PACKS, f));
  home = mkdtempSync(join(tmpdir(), "rn-packages-"));
  execFileSync("npm", ["install", "--no-audit", "--no-fund", ...tarballs], {
    cwd: home,
    env: npmEnv(),
    stdio: "ignore",
  });
}, 300_000);

afterAll(() => {
  if (home) rmSync(home, { recursive: true, force: true });
});

describe("npm packages", () => {
  it("one per server and the CLI: bundles and launchers only, no maps, no sources, no workspace links", () => {
    const names = tarballs.map((t) => t.slice(PACKS.length + 1)).sort();
    expect(names).toEqual(
      [...readRegistry().map((s) => `roadnerd-${s.name}-0.1.0.tgz`), `${CLI_PACKAGE}-0.1.0.tgz`].sort(),
    );
    for (const t of tarballs) {
      const files = execFileSync("tar", ["-tzf", t], { encoding: "utf8" }).split("\n").filter(Boolean);
      const own = files.filter((f) => !f.includes("/node_modules/"));
      expect(
        own.filter((f) => f.endsWith(".map") || f.endsWith(".ts") || f.includes("/src/")),
        t,
      ).toEqual([]);
      const pkg = JSON.parse(execFileSync("tar", ["-xzOf", t, "package/package.json"], { encoding: "utf8" }));
      expect(JSON.stringify(pkg), t).not.toContain("workspace:");
      expect(pkg.devDependencies, t).toBeUndefined();
      // Whatever it depends on travels inside it, so an install needs no registry.
      expect(Object.keys(pkg.dependencies ?? {}).sort(), t).toEqual([...(pkg.bundleDependencies ?? [])].sort());
      expect(Object.keys(pkg.bin).length, t).toBe(1);
    }
  });
});

async function listTools(entry: StdioEntry): Promise<string[]> {
  const client = new Client({ name: "roadnerd-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({ command: entry.command, args: entry.args, cwd: home, env: npmEnv(), stderr: "ignore" }),
  );
  try {
    return (await client.listTools()).tools.map((t) => t.name);
  } finally {
    await client.close();
  }
}

describe("bins of the installed packages", () => {
  it("`npx roadnerd-network --help` and `npx roadnerd --version`: found by their bin names, exit 0", () => {
    const run = (...args: string[]) =>
      // As a person types it: an npx flag before the name (--no) would make npx take --help as its own.
      execFileSync("npx", args, { cwd: home, env: npmEnv(), encoding: "utf8", timeout: 60_000 });
    expect(run("roadnerd-network", "--help")).toContain("usage: roadnerd-network [--stdio]");
    expect(run("roadnerd", "--version")).toBe("roadnerd 0.1.0\n");
  }, 120_000);
});

describe("client entries (npx), from the installed packages", () => {
  it("the gateway over stdio (`npx -y roadnerd-mcp mcp`) lists every server's tools and triage", async () => {
    const tools = await listTools(npxGatewayStdio);
    expect(tools).toContain("triage");
    for (const s of readRegistry()) expect(tools.some((t) => t.startsWith(`${s.name}__`))).toBe(true);
  }, 120_000);

  it("one server over stdio (`npx @roadnerd/network --stdio`) lists its tools", async () => {
    expect(await listTools(npxServerStdio)).toContain("route_info");
  }, 120_000);

  it("`npx roadnerd-mcp up` answers /healthz, and the HTTP config's gateway URL lists tools", async () => {
    // Its own network namespace: up takes the default ports (7100, 7101), which other test files use too.
    const child: ChildProcess = spawn(
      "unshare",
      ["--net", "--", "sh", "-c", `ip link set lo up && exec npx ${CLI_PACKAGE} up network`],
      { cwd: home, env: npmEnv(), stdio: ["ignore", "pipe", "pipe"], detached: true },
    );
    let stdout = "";
    child.stdout?.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    const exited = new Promise<string>((r) => child.once("exit", (code, signal) => r(String(code ?? signal))));
    try {
      const deadline = Date.now() + scaledMs(60_000);
      while (!stdout.includes("gateway (MCP)") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(stdout).toContain(GATEWAY_URL);
      // A client inside that namespace: the server's /healthz, then tools/list at the config's URL.
      const probe = `
        const h = await (await fetch("http://127.0.0.1:7101/healthz")).json();
        const r = await fetch(${JSON.stringify(GATEWAY_URL)}, { method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }) });
        const tools = (await r.json()).result.tools.map((t) => t.name);
        console.log(JSON.stringify({ ok: h.ok, name: h.name, tools }));`;
      const out = execFileSync(
        "nsenter",
        ["-t", String(child.pid), "-n", process.execPath, "--input-type=module", "-e", probe],
        { encoding: "utf8" },
      );
      const got = JSON.parse(out) as { ok: boolean; name: string; tools: string[] };
      expect(got).toMatchObject({ ok: true, name: "roadnerd-network" });
      expect(got.tools).toContain("network__route_info");
    } finally {
      if (child.pid && child.exitCode === null) process.kill(-child.pid, "SIGINT");
    }
    // Ctrl-C reaches the whole group: roadnerd stops its servers and exits 0; npx may report the signal itself.
    expect(["0", "SIGINT"]).toContain(await exited);
  }, 180_000);
});
