/**
 * Every registered server answers on every surface from its bin, as an orchestrator, an operator and an MCP
 * client start it: one `listening` line first, /healthz, the catalog, each tool's schema, /openapi.json, MCP
 * over Streamable HTTP and over stdio, --help, and a clean refusal of a bad argument.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { createClient } from "@roadnerd/client";
import type { BaseConfig, ServerDef } from "@roadnerd/conventions";
import { loadServer, selectedServers } from "@roadnerd/registry";
import { mcpOverHttp, mcpOverStdio, type SpawnedServer, serverEntry, spawnServer } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type World, worldFor } from "./suites/lib/worlds.ts";

const run = promisify(execFile);

describe.each(selectedServers())("roadnerd-$name", (s) => {
  // One server, as its bin starts it, for every test that only talks to it.
  let def: ServerDef<BaseConfig>;
  let server: SpawnedServer;
  // In the server's README world (a booted systemd, a served page…), so its example calls succeed.
  let world: World | undefined;
  beforeAll(async () => {
    def = await loadServer(s.name);
    world = await worldFor(s);
    server = await spawnServer(s.name, { env: world?.env ?? {} });
  });
  afterAll(async () => {
    await server?.stop();
    await world?.close();
  });

  it("HTTP: one listening line first, then /healthz, /actions, each tool's schema and /openapi.json", async () => {
    const first = JSON.parse(server.lines[0] ?? "{}") as { msg?: string; url?: string };
    expect(first).toMatchObject({ msg: "listening", url: server.url });
    expect(server.lines.join("\n")).not.toContain("Server listening");
    const client = createClient(server.url);
    expect(await client.healthz()).toMatchObject({ ok: true, name: `roadnerd-${s.name}`, version: s.version });
    const catalog = await client.actions();
    expect(catalog.map((t) => t.tool)).toEqual(def.tools.map((t) => `${s.name}/${t.name}`));
    for (const entry of catalog) expect(entry.summary.length).toBeGreaterThan(10);
    for (const tool of def.tools) {
      const res = await fetch(`${server.url}/actions/${tool.name}`);
      expect(await res.json()).toMatchObject({ tool: `${s.name}/${tool.name}`, example: tool.example });
    }
    const openapi = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    for (const tool of def.tools) expect(openapi.paths).toHaveProperty(`/actions/${tool.name}`);
  });

  it("MCP over Streamable HTTP and over stdio: the same tools, read-only, only the tools capability", async () => {
    const overHttp = await mcpOverHttp(server.url);
    const overStdio = await mcpOverStdio(s.name, { env: { ...world?.env, LOG_LEVEL: "silent" } });
    try {
      for (const { client } of [overHttp, overStdio]) {
        expect(client.getServerVersion()).toMatchObject({ name: `roadnerd-${s.name}`, version: s.version });
        // No listChanged: the tool list never changes, so the server must not promise notifications.
        expect(client.getServerCapabilities()).toEqual({ tools: {} });
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).toEqual(def.tools.map((t) => t.name));
        for (const t of tools) expect(t.annotations?.readOnlyHint).toBe(true);
      }
    } finally {
      await overHttp.close();
      await overStdio.close();
    }
  });

  it("beyond loopback it needs AUTH_TOKEN and TLS (or the explicit opt-outs), and says so", async () => {
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOST: "0.0.0.0", PORT: "0" };
    const refused = await run(process.execPath, [serverEntry(s.name)], { env }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining("without AUTH_TOKEN") });
    const inClear = await run(process.execPath, [serverEntry(s.name)], {
      env: { ...env, AUTH_TOKEN: "a-token-of-sixteen-plus" },
    }).catch((e: { code: number; stderr: string }) => e);
    expect(inClear).toMatchObject({ code: 2, stderr: expect.stringContaining("without TLS") });
    const extras: Array<Record<string, string>> = [
      { AUTH_TOKEN: "a-token-of-sixteen-plus", ALLOW_PLAINTEXT: "1" },
      { ALLOW_UNAUTHENTICATED: "1", ALLOW_PLAINTEXT: "1" },
    ];
    for (const extra of extras) {
      const server = await spawnServer(s.name, { env: { HOST: "0.0.0.0", ...extra } });
      expect(server.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
      await server.stop();
    }
  });

  it("a port already in use is one clear line and exit 1, not a stack", async () => {
    const port = new URL(server.url).port;
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOST: "127.0.0.1", PORT: port };
    const second = await run(process.execPath, [serverEntry(s.name)], { env }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(second).toMatchObject({ code: 1, stderr: expect.stringContaining("is already in use") });
    expect((second as { stderr: string }).stderr).not.toMatch(/\n\s+at /);
  });

  it("the catalog's ids are callable: POST /actions/<server>/<tool> and MCP's <server>/<tool>", async () => {
    const tool = def.tools.find((t) => !t.openWorld) ?? def.tools[0];
    const id = `${s.name}/${tool?.name}`;
    const res = await fetch(`${server.url}/actions/${id}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(tool?.example ?? {}),
    });
    expect(res.status).toBe(200);
    const rpc = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: id, arguments: tool?.example },
      }),
    });
    expect(((await rpc.json()) as { result?: { isError?: boolean } }).result?.isError).toBeFalsy();
    const root = (await (await fetch(`${server.url}/`)).json()) as { endpoints?: object; tools?: string[] };
    expect(root.tools).toEqual(def.tools.map((t) => t.name));
  });

  it("--help describes it; an unknown argument exits 2 before binding anything", async () => {
    const { stdout } = await run(process.execPath, [serverEntry(s.name), "--help"]);
    expect(stdout).toContain(`roadnerd-${s.name}: ${s.summary}`);
    expect(stdout).toContain(`PORT (default ${s.defaultPort}`);
    const bad = await run(process.execPath, [serverEntry(s.name), "--verbose"]).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining("unknown argument: --verbose") });
  });
});
