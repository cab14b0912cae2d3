/**
 * Local users and shutdown answers, for every registered server (issue 18, findings 4 and 7), so a new server
 * gets both checks the day it is added.
 *
 * 1. uid trust: a real server on 127.0.0.1:0 and a client run as uid 65534 (`setpriv`): POST /actions/<tool> and
 *    GET /sse/<tool> are 403 E_FORBIDDEN naming the uid, /healthz stays open; with ALLOWED_UIDS=65534 the
 *    same call is no longer refused.
 * 2. SIGTERM mid-call: the built server (HTTP, then --stdio) with a call held in flight past the 2 s grace
 *    period (a tool's command is a fake binary that hangs, or a URL target is an HTTP server that never
 *    answers): over HTTP the call gets 503 E_BUSY, over stdio a JSON-RPC error with E_BUSY and its id; then
 *    the process exits 0. Before: over stdio no answer at all.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import type { AnyTool } from "@roadnerd/conventions";
import { fakeBinaries, testApp } from "@roadnerd/conventions/testing";
import { loadServer, REPO_ROOT, type RegisteredServer, selectedServers } from "@roadnerd/registry";
import { pollUntil, scaledMs } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const registered = selectedServers();
const NOBODY = 65534;

/** One HTTP request from uid 65534, in a child process: the status and body. */
async function asNobody(url: string, method: "GET" | "POST", body?: string) {
  const target = new URL(url);
  const headers = body ? { "content-type": "application/json" } : {};
  const script = `const h=require("node:http");const q=h.request({host:"127.0.0.1",port:${target.port},path:${JSON.stringify(target.pathname + target.search)},method:${JSON.stringify(method)},headers:${JSON.stringify(headers)}},r=>{let b="";r.on("data",d=>b+=d);r.on("end",()=>process.stdout.write(JSON.stringify({status:r.statusCode,body:b.slice(0,2000)})));setTimeout(()=>r.destroy(),500)});q.on("error",e=>process.stdout.write(JSON.stringify({status:0,body:String(e)})));q.end(${body ? JSON.stringify(body) : ""})`;
  const { stdout } = await promisify(execFile)(
    "setpriv",
    [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", process.execPath, "-e", script],
    { timeout: scaledMs(20_000) },
  );
  return JSON.parse(stdout) as { status: number; body: string };
}

describe.each(registered)("local users against $name", (server) => {
  let base: string;
  let app: Awaited<ReturnType<typeof testApp>>;
  let listed: Awaited<ReturnType<typeof testApp>>;
  let listedBase: string;
  let tool: AnyTool;

  beforeAll(async () => {
    const def = await loadServer(server.name);
    const first = def.tools[0];
    if (!first) throw new Error(`${server.name} has no tool`);
    tool = first;
    app = await testApp(def);
    await app.listen({ host: "127.0.0.1", port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    listed = await testApp(def, { env: { ALLOWED_UIDS: String(NOBODY) } });
    await listed.listen({ host: "127.0.0.1", port: 0 });
    listedBase = `http://127.0.0.1:${(listed.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app?.close();
    await listed?.close();
  });

  it("uid 65534 is refused on /actions and /sse with E_FORBIDDEN; /healthz stays open; ALLOWED_UIDS lets it in", async () => {
    const example = JSON.stringify({ ...(tool.example as Record<string, unknown>), timeout_ms: 1000 });
    const query = new URLSearchParams(
      Object.entries(tool.example as Record<string, unknown>).map(([k, v]): [string, string] => [k, String(v)]),
    );
    for (const [method, path, body] of [
      ["POST", `/actions/${tool.name}`, example],
      ["GET", `/sse/${tool.name}?${query}`, undefined],
    ] as const) {
      const refused = await asNobody(`${base}${path}`, method, body);
      expect(refused.status, `${method} ${path}: ${refused.body}`).toBe(403);
      expect(JSON.parse(refused.body).error).toMatchObject({
        code: "E_FORBIDDEN",
        message: `local user uid ${NOBODY} may not call this server`,
      });
    }
    expect((await asNobody(`${base}/healthz`, "GET")).status).toBe(200);
    const served = await asNobody(`${listedBase}/actions/${tool.name}`, "POST", example);
    expect(served.status).toBeGreaterThan(0);
    // Whatever the tool says (webcheck's allowlist may refuse the example's target), not the uid refusal.
    expect(served.body).not.toContain("may not call this server");
  }, 60_000);
});

/** A call that stays in flight: the tool, its input, and how to tell that it has started. */
interface HeldCall {
  tool: string;
  input: Record<string, unknown>;
  started(): boolean;
}

/** What holds calls: hanging fake binaries (a marker file says one started) and an HTTP target that never answers. */
interface Holders {
  binDir: string;
  targetUrl: string;
  seen: Set<string>;
  close(): Promise<void>;
}

async function startHolders(binaries: readonly string[]): Promise<Holders> {
  const bin = await fakeBinaries(
    Object.fromEntries(binaries.map((b) => [b, `: > "$(/usr/bin/dirname "$0")/started.${b}"; exec /bin/sleep 30`])),
  );
  const seen = new Set<string>();
  const held: ServerResponse[] = [];
  const target = createServer((req, res) => {
    seen.add(req.url ?? "");
    held.push(res);
  });
  target.listen(0, "127.0.0.1");
  await once(target, "listening");
  return {
    binDir: bin.dir,
    targetUrl: `http://127.0.0.1:${(target.address() as AddressInfo).port}`,
    seen,
    async close() {
      for (const res of held) res.destroy();
      target.closeAllConnections();
      await new Promise((r) => target.close(r));
      await bin.cleanup();
    },
  };
}

/** Every way this server's tools can be held: each tool with commands, each tool with a URL target. */
function candidates(tools: readonly AnyTool[], holders: Holders, tag: string): HeldCall[] {
  const out: HeldCall[] = [];
  for (const t of tools) {
    const example = { ...(t.example as Record<string, unknown>), timeout_ms: 15_000 };
    if (t.commands.length > 0) {
      const markers = t.commands.map((c) => join(holders.binDir, `started.${c.binary}`));
      out.push({ tool: t.name, input: example, started: () => markers.some((m) => existsSync(m)) });
    }
    const urlField = Object.entries(t.targets ?? {}).find(([, kind]) => kind === "url")?.[0];
    if (urlField) {
      const path = `/${tag}/${t.name}`;
      out.push({
        tool: t.name,
        input: { ...example, [urlField]: `${holders.targetUrl}${path}` },
        started: () => holders.seen.has(path),
      });
    }
  }
  return out;
}

/**
 * A server's own settings that make its tools reach their commands on this machine (the fake binaries): ports
 * reads /proc unless told to ask ss; service asks systemd only where it runs as PID 1 (any directory will do).
 */
const REACH_COMMANDS: Record<string, (binDir: string) => Record<string, string>> = {
  ports: () => ({ SOCKETS_SOURCE: "ss" }),
  service: (binDir) => ({ SYSTEMD_BOOTED_DIR: binDir }),
};

/** The built server, started in HTTP or stdio mode with the holders in its environment. */
function startServer(server: RegisteredServer, holders: Holders, stdio: boolean): ChildProcess {
  // Markers left by an earlier run would say "started" before this one has.
  for (const name of readdirSync(holders.binDir).filter((n) => n.startsWith("started."))) {
    rmSync(join(holders.binDir, name), { force: true });
  }
  return spawn(process.execPath, [join(REPO_ROOT, server.entry), ...(stdio ? ["--stdio"] : [])], {
    env: {
      ...REACH_COMMANDS[server.name]?.(holders.binDir),
      PATH: "/usr/bin:/bin",
      HOST: "127.0.0.1",
      PORT: "0",
      LOG_LEVEL: "info",
      EXEC_PATH: holders.binDir,
      // The allowlist-only servers (proxy, webcheck) need the target named; loopback for everyone else.
      OUTBOUND_ALLOW: "127.0.0.1",
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
}

/** Lines of a stream, parsed as JSON where they are. */
function jsonLines(stream: NodeJS.ReadableStream | null): Array<Record<string, unknown>> {
  const lines: Array<Record<string, unknown>> = [];
  let buffer = "";
  stream?.on("data", (d: Buffer) => {
    buffer += d.toString();
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    for (const p of parts) {
      try {
        lines.push(JSON.parse(p));
      } catch {
        // not a JSON line
      }
    }
  });
  return lines;
}

/** Servers where no tool can be held in flight from outside (no command, no URL target): pinned, on purpose. */
const NOTHING_TO_HOLD = ["dns-config", "storage"];
const tally = { http: 0, stdio: 0 };

describe.each(registered)("SIGTERM mid-call against $name", (server) => {
  let holders: Holders;
  let tools: readonly AnyTool[];

  beforeAll(async () => {
    const def = await loadServer(server.name);
    tools = def.tools;
    holders = await startHolders([...new Set(def.commands.map((c) => c.binary))]);
  });
  afterAll(async () => {
    await holders?.close();
  });

  it("over HTTP: 503 E_BUSY for the call in flight, then exit 0", async () => {
    const all = candidates(tools, holders, "http");
    if (all.length === 0) return void expect(NOTHING_TO_HOLD).toContain(server.name);
    expect(NOTHING_TO_HOLD).not.toContain(server.name);
    const child = startServer(server, holders, false);
    const logs = jsonLines(child.stdout);
    child.stderr?.resume();
    const exited = once(child, "exit") as Promise<[number | null]>;
    try {
      await pollUntil(() => logs.some((l) => l.msg === "listening"), 20_000);
      const url = logs.find((l) => l.msg === "listening")?.url;
      expect(typeof url).toBe("string");
      // The first candidate that stays in flight; calls that answer at once are not what this checks.
      let pending: Promise<{ status: number; body: string }> | undefined;
      for (const c of all) {
        let answered = false;
        const call = fetch(`${url}/actions/${c.tool}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(c.input),
        })
          .then(async (r) => ({ status: r.status, body: await r.text() }))
          .finally(() => {
            answered = true;
          });
        if ((await pollUntil(() => c.started() || answered, 10_000)) && !answered) {
          pending = call;
          break;
        }
        await call.catch(() => undefined);
      }
      expect(pending, `${server.name}: no call stayed in flight`).toBeDefined();
      child.kill("SIGTERM");
      const answer = await pending;
      expect(answer?.status, answer?.body).toBe(503);
      expect(JSON.parse(answer?.body ?? "{}").error).toMatchObject({ code: "E_BUSY" });
      const [code] = await exited;
      expect(code).toBe(0);
      tally.http += 1;
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 90_000);

  it("over stdio: a JSON-RPC error with E_BUSY and the call's id, then exit 0", async () => {
    const all = candidates(tools, holders, "stdio");
    if (all.length === 0) return void expect(NOTHING_TO_HOLD).toContain(server.name);
    const child = startServer(server, holders, true);
    const answers = jsonLines(child.stdout);
    child.stderr?.resume();
    const exited = once(child, "exit") as Promise<[number | null]>;
    const send = (m: unknown) => child.stdin?.write(`${JSON.stringify(m)}\n`);
    try {
      const init = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "suite", version: "1" } };
      send({ jsonrpc: "2.0", id: 1, method: "initialize", params: init });
      send({ jsonrpc: "2.0", method: "notifications/initialized" });
      let heldId: number | undefined;
      for (const [i, c] of all.entries()) {
        const id = 100 + i;
        send({ jsonrpc: "2.0", id, method: "tools/call", params: { name: c.tool, arguments: c.input } });
        const answered = () => answers.some((a) => a.id === id);
        if ((await pollUntil(() => c.started() || answered(), 10_000)) && !answered()) {
          heldId = id;
          break;
        }
      }
      expect(heldId, `${server.name}: no call stayed in flight`).toBeDefined();
      child.kill("SIGTERM");
      const [code] = await exited;
      expect(code).toBe(0);
      expect(answers.filter((a) => a.id === heldId)).toEqual([
        expect.objectContaining({ error: expect.objectContaining({ data: { code: "E_BUSY" } }) }),
      ]);
      tally.stdio += 1;
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 90_000);
});

afterAll(() => {
  console.log(`shutdown answers: ${tally.http} servers over HTTP, ${tally.stdio} over stdio`);
});
