// docker-compose.yml in a real engine: podman (runc) behind `podman system service`, docker-compose 1.29 on its
// Docker API socket, the images of every Dockerfile target built beforehand (`pnpm test:containers` runs
// scripts/containers.sh images). Sealed: the containers share this run's private network namespace (host
// network = loopback only). Every service healthy, one tool per server through the gateway answering with what
// the host really has, and `down` leaving no container, network or volume behind.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { REPO_ROOT, readRegistry } from "@roadnerd/registry";
import { mcpOverStdio, scaledMs } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { readmeComposeSteps } from "../lib/readme-blocks.ts";

const PROJECT = "rncomposetest";
/** The README's own lines (`up -d`, `ps`, `down`), so what it tells people is what runs here. */
const [up = [], ps = [], down = []] = readmeComposeSteps();
const GATEWAY = "http://127.0.0.1:7100/mcp";
const compose = parse(readFileSync(join(REPO_ROOT, "docker-compose.yml"), "utf8")) as {
  services: Record<string, unknown>;
};
const services = Object.keys(compose.services);

const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { cwd: REPO_ROOT, encoding: "utf8" });
const composeRun = (...args: string[]) => run("bash", ["scripts/containers.sh", "compose", "-p", PROJECT, ...args]);
const podman = (...args: string[]) => run("podman", args).split("\n").filter(Boolean);
const ofProject = (kind: "ps" | "network" | "volume") =>
  kind === "ps"
    ? podman("ps", "-a", "--filter", `label=com.docker.compose.project=${PROJECT}`, "--format", "{{.Names}}")
    : podman(kind, "ls", "--filter", `label=com.docker.compose.project=${PROJECT}`, "--format", "{{.Name}}");

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Each service's container passes its compose healthcheck (podman runs none by itself without systemd). */
async function healthy(service: string, deadline: number): Promise<boolean> {
  const name = `${PROJECT}_${service}_1`;
  while (Date.now() < deadline) {
    try {
      execFileSync("podman", ["healthcheck", "run", name], { stdio: "ignore" });
      return true;
    } catch {
      await sleep(500);
    }
  }
  return false;
}

/** The value at a dotted path of parsed JSON ("result.tools"), undefined when any step is missing. */
function get(json: unknown, path: string): unknown {
  let v = json;
  for (const key of path.split(".")) v = typeof v === "object" && v !== null ? Reflect.get(v, key) : undefined;
  return v;
}

/** Those fields of an answer, for comparing the container's with the host's. */
const pick = (json: unknown, keys: string[]) => Object.fromEntries(keys.map((k) => [k, get(json, k)]));

let rpcId = 0;
/** One MCP request to the gateway (stateless Streamable HTTP, JSON answers). */
async function mcp(method: string, params: unknown): Promise<unknown> {
  const send = () =>
    fetch(GATEWAY, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, method, params }),
    });
  // A kept-alive connection the gateway closed as its idle time ran out (a test before this one spent 15 s in du
  // on a loaded machine) fails the request sent on it with "other side closed": once more, on a new connection.
  // Every call here is a read-only tool or a list.
  const res = await send().catch((err: unknown) => {
    if ((err as { cause?: { code?: string } }).cause?.code !== "UND_ERR_SOCKET") throw err;
    return send();
  });
  return res.json();
}

/** The same tool run on the host itself (the built server over stdio, its default root "/"): what is true. */
async function onHost(server: string, name: string, args: Record<string, unknown>): Promise<unknown> {
  const session = await mcpOverStdio(server);
  try {
    const r = await session.client.callTool({ name, arguments: args });
    expect(r.isError, JSON.stringify(r)).toBeFalsy();
    return r.structuredContent;
  } finally {
    await session.close();
  }
}

async function tool(name: string, args: Record<string, unknown>): Promise<unknown> {
  const r = await mcp("tools/call", { name, arguments: args });
  expect(get(r, "error"), JSON.stringify(r)).toBeUndefined();
  expect(get(r, "result.isError"), JSON.stringify(r)).toBeFalsy();
  return get(r, "result.structuredContent");
}

describe("docker compose in a real engine (podman)", () => {
  let listener: ReturnType<typeof spawn> | undefined;
  let port = 0;

  beforeAll(async () => {
    // Leftovers of an interrupted run would clash on the names.
    composeRun("down", "--remove-orphans");
    composeRun(...up);
  });

  afterAll(() => {
    if (listener?.pid) listener.kill();
    composeRun("down", "--remove-orphans");
  });

  it("runs every registered server and the gateway, each healthy", async () => {
    expect(services.sort()).toEqual([...readRegistry().map((s) => s.name), "gateway"].sort());
    const deadline = Date.now() + scaledMs(60_000);
    for (const s of services) expect(await healthy(s, deadline), `${s} healthy`).toBe(true);
    for (const s of readRegistry()) {
      const health: unknown = await (await fetch(`http://127.0.0.1:${s.defaultPort}/healthz`)).json();
      expect(get(health, "capabilities.container"), `${s.name} /healthz container`).toBe("podman");
    }
  });

  it("each server's image starts from the code cache its build wrote (ADR 0062)", () => {
    for (const s of readRegistry()) {
      // --help: the launcher compiles the bundle (and says how) before the server reads any config.
      const run = spawnSync(
        "bash",
        [
          "scripts/containers.sh",
          "podman",
          "run",
          "--rm",
          "--network",
          "none",
          "-e",
          "ROADNERD_CODE_CACHE=report",
        ].concat([`roadnerd-${s.name}`, "--help"]),
        { cwd: REPO_ROOT, encoding: "utf8", timeout: scaledMs(60_000) },
      );
      expect(run.status, `${s.name}'s image: ${run.stderr}`).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^roadnerd-${s.name}:`));
      expect(run.stderr, `${s.name}'s image`).toContain("code cache: accepted");
    }
  });

  it("`docker compose ps` lists every service", () => {
    const listed = composeRun(...ps);
    for (const s of services) expect(listed).toContain(`${PROJECT}_${s}_1`);
  });

  it("lists every server's tools through the gateway, by service name", async () => {
    const r = await mcp("tools/list", {});
    const tools = get(r, "result.tools");
    const names = Array.isArray(tools) ? tools.map((t) => String(get(t, "name"))) : [];
    for (const s of readRegistry()) expect(names.some((n) => n.startsWith(`${s.name}__`))).toBe(true);
  });

  it("storage counts the host's /var like du, within 1%", async () => {
    const duBefore = Number(run("du", ["-sxB1", "/var"]).split("\t")[0]);
    const got = await tool("storage__top_consumers", { path: "/host/var", timeout_ms: 15_000 });
    const duAfter = Number(run("du", ["-sxB1", "/var"]).split("\t")[0]);
    expect(get(got, "truncated")).toBe(false);
    // /var may change while the walk runs (logs, a build's layers): the answer lies between du's two readings,
    // each side widened by 1%.
    const [low, high] = [Math.min(duBefore, duAfter), Math.max(duBefore, duAfter)].map((b) => b / 2 ** 20);
    const mb = Number(get(got, "total_mb"));
    expect(mb, `du read ${low}–${high} MiB`).toBeGreaterThanOrEqual((low ?? 0) * 0.99);
    expect(mb, `du read ${low}–${high} MiB`).toBeLessThanOrEqual((high ?? 0) * 1.01);
  });

  it("ports names a listener's user from the host's /etc/passwd", async () => {
    const server: Server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const address = server.address();
    port = typeof address === "object" && address ? address.port : 0;
    server.close();
    // A listener as uid 1000, whom the image's own /etc/passwd would call `node`.
    listener = spawn(
      "setpriv",
      [
        "--reuid=1000",
        "--regid=1000",
        "--clear-groups",
        process.execPath,
        "-e",
        `require("node:net").createServer().listen(${port}, "127.0.0.1")`,
      ],
      { stdio: "ignore" },
    );
    const hostName = run("getent", ["passwd", "1000"]).split(":")[0];
    const deadline = Date.now() + scaledMs(10_000);
    let pids: unknown[] = [];
    while (Date.now() < deadline) {
      const got = get(await tool("ports__who_uses_port", { port }), "pids");
      pids = Array.isArray(got) ? got : [];
      if (pids.length) break;
      await sleep(200);
    }
    expect(pids.map((p) => get(p, "user"))).toEqual([hostName]);
    // The image runs the kernel's native module (compiled in the build stage, ADR 0064): listeners from netlink.
    const listed = await tool("ports__listening_sockets", { proto: "tcp", limit: 500 });
    expect(get(listed, "source")).toBe("netlink");
    const sockets = get(listed, "sockets");
    expect(Array.isArray(sockets) ? sockets.map((s) => get(s, "port")) : []).toContain(port);
  });

  it("dns-config sees whether the host has systemd-resolved", async () => {
    const got = await tool("dns-config__resolved_status", {});
    const host = await onHost("dns-config", "resolved_status", {});
    expect(pick(got, ["installed", "running", "dns"])).toEqual(pick(host, ["installed", "running", "dns"]));
    const conf = await tool("dns-config__dns_config_get", {});
    const hostConf = await onHost("dns-config", "dns_config_get", {});
    const fields = ["mode", "nameservers", "search", "read"];
    expect(pick(conf, fields)).toEqual(pick(hostConf, fields));
  });

  it("network lists the interfaces of the network namespace it shares", async () => {
    const got = await tool("network__iface_info", {});
    const host = (JSON.parse(run("ip", ["-j", "link"])) as Array<{ ifname: string }>).map((l) => l.ifname).sort();
    expect(JSON.stringify(got)).toContain('"lo"');
    for (const name of host) expect(JSON.stringify(got)).toContain(`"${name}"`);
  });

  it("proxy reads the host's /etc, not the image's", async () => {
    const got = await tool("proxy__proxy_env_status", {});
    const host = await onHost("proxy", "proxy_env_status", {});
    expect(pick(got, ["system", "pac", "unread"])).toEqual(pick(host, ["system", "pac", "unread"]));
  });

  it("service answers from the host's systemd, or says it is not running", async () => {
    const r = await mcp("tools/call", { name: "service__list_failed_units", arguments: {} });
    const booted = existsSync("/run/systemd/system");
    if (booted) expect(get(r, "result.isError"), JSON.stringify(r)).toBeFalsy();
    else expect(String(get(r, "result.content.0.text"))).toContain("systemd is not running as PID 1");
  });

  it("down leaves no container, network or volume", () => {
    composeRun(...down);
    expect(ofProject("ps")).toEqual([]);
    expect(ofProject("network")).toEqual([]);
    expect(ofProject("volume")).toEqual([]);
  });
});
