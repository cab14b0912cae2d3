/**
 * The built server as a client sees it (spawned from its bin, loopback only): head and tls_info over HTTP, the
 * snapshot stream over SSE (ping, one message, end), both tools over MCP (Streamable HTTP and stdio), and on
 * SIGTERM the warm browser goes with the server: no Chromium process and no profile directory left behind.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isLive, pidsWhere, SPAWN_HELPER_MARK } from "@roadnerd/conventions/testing";
import {
  generateTestCerts,
  mcpOverHttp,
  mcpOverStdio,
  type SpawnedServer,
  spawnServer,
  startTestServer,
  type TestCerts,
  type TestServer,
} from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Outside, PAGE_TITLE, startOutside, startPages } from "./helpers/pages.ts";
import { decodePngHeader } from "./helpers/png.ts";

let certs: TestCerts;
let pages: TestServer;
let outside: Outside;
let tls: TestServer;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  certs = await generateTestCerts();
  outside = await startOutside();
  pages = await startPages(outside);
  tls = await startTestServer((_q, r) => r.end("ok"), { tls: certs.valid });
  dir = await mkdtemp(join(tmpdir(), "webcheck-e2e-"));
  env = { OUTBOUND_ALLOW: "127.0.0.1", WEBCHECK_ARTIFACTS_DIR: dir, WEBCHECK_CA_FILE: certs.caFile };
});

afterAll(async () => {
  await pages?.close();
  await outside?.close();
  await tls?.close();
  await certs?.cleanup();
  await rm(dir, { recursive: true, force: true });
});

interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

async function sse(url: string): Promise<SseEvent[]> {
  const text = await (await fetch(url)).text();
  return text
    .trim()
    .split("\n\n")
    .map((block) => ({
      event: /^event: (.*)$/m.exec(block)?.[1] ?? "",
      data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? "{}") as Record<string, unknown>,
    }));
}

/**
 * Room for a cold Chromium on a loaded machine: the page-load deadline and the stream's duration are long, and
 * cost nothing when the page loads at once.
 */
const ROOM = "&timeout_ms=50000&duration_ms=60000";

const childrenOf = (pid: number) => pidsWhere("status", (s) => new RegExp(`^PPid:\\s+${pid}$`, "m").test(s));

describe("the built server", () => {
  let server: SpawnedServer;
  beforeAll(async () => {
    server = await spawnServer("webcheck", { env });
  });
  afterAll(() => server?.stop());

  it("snapshot over SSE: ping while loading, one message with the screenshot, end", async () => {
    const events = await sse(
      `${server.url}/sse/snapshot?url=${encodeURIComponent(`${pages.url}/`)}&width=640&height=480${ROOM}`,
    );
    expect(events[0]?.event).toBe("ping");
    expect(events.map((e) => e.event).filter((e) => e !== "ping")).toEqual(["message", "end"]);
    const message = events.find((e) => e.event === "message")?.data as {
      title: string;
      screenshot: { path: string; width: number; height: number; bytes: number };
    };
    expect(message.title).toBe(PAGE_TITLE);
    expect(decodePngHeader(message.screenshot.path)).toEqual({
      width: 640,
      height: 480,
      bytes: message.screenshot.bytes,
    });
    expect(events.at(-1)?.data).toEqual({ reason: "done" });
  });

  it("a refused redirect over SSE is an error event, then end", async () => {
    const events = await sse(`${server.url}/sse/snapshot?url=${encodeURIComponent(`${pages.url}/away`)}`);
    const rest = events.filter((e) => e.event !== "ping");
    expect(rest.map((e) => e.event)).toEqual(["error", "end"]);
    expect(rest[0]?.data).toMatchObject({ code: "E_FORBIDDEN" });
    expect(outside.connections()).toBe(0);
  });

  it("head and tls_info over HTTP", async () => {
    const post = async (tool: string, body: unknown) =>
      (await fetch(`${server.url}/actions/${tool}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then((r) => r.json())) as Record<string, unknown>;
    expect(await post("head", { url: `${pages.url}/` })).toMatchObject({ status: 200 });
    expect(await post("tls_info", { url: `https://127.0.0.2:${tls.port}/` })).toMatchObject({
      error: { code: "E_FORBIDDEN" },
    });
    expect(await post("tls_info", { url: `https://127.0.0.1:${tls.port}/` })).toMatchObject({
      trusted: true,
      issuer: "RoadNerd Test CA",
    });
  });

  it("MCP over Streamable HTTP lists the tools, read-only, the probes open-world, and calls them", async () => {
    const mcp = await mcpOverHttp(server.url);
    const client = mcp.client;
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(["head", "tls_info", "screenshots"]);
      for (const t of tools) {
        expect(t.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: t.name !== "screenshots" });
      }
      const r = await client.callTool({ name: "head", arguments: { url: `${pages.url}/`, run_id: "mcp-1" } });
      expect(r.structuredContent).toMatchObject({ status: 200, run_id: "mcp-1" });
      const bad = await client.callTool({ name: "tls_info", arguments: { url: `${pages.url}/` } });
      expect(bad.isError).toBe(true);
      expect(JSON.parse((bad.content as Array<{ text: string }>)[0]?.text ?? "{}").error.code).toBe("E_INVALID_INPUT");
    } finally {
      await mcp.close();
    }
  });

  it("MCP over stdio: the same tools, and a refusal without OUTBOUND_ALLOW names the variable", async () => {
    const mcp = await mcpOverStdio("webcheck", { env: { LOG_LEVEL: "silent" } });
    const client = mcp.client;
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["head", "tls_info", "screenshots"]);
      const r = await client.callTool({ name: "head", arguments: { url: `${pages.url}/` } });
      expect(r.isError).toBe(true);
      expect(JSON.parse((r.content as Array<{ text: string }>)[0]?.text ?? "{}").error).toMatchObject({
        code: "E_FORBIDDEN",
        message: expect.stringContaining("OUTBOUND_ALLOW"),
      });
    } finally {
      await mcp.close();
    }
  });
});

describe("shutdown", () => {
  it("SIGTERM takes the warm browser and its profile with the server", async () => {
    const server = await spawnServer("webcheck", { env });
    const events = await sse(`${server.url}/sse/snapshot?url=${encodeURIComponent(`${pages.url}/`)}${ROOM}`);
    expect(events.some((e) => e.event === "message")).toBe(true);
    // Its children: the browser, and the spawn helper that ran `chromium --version` (ADR 0068).
    const children = childrenOf(server.pid);
    const browser = children.filter((pid) => !readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(SPAWN_HELPER_MARK));
    expect(browser).toHaveLength(1);
    expect(children).toHaveLength(2);
    // Its profile and HOME, from its own command line and environment.
    const argv = readFileSync(`/proc/${browser[0]}/cmdline`, "utf8").split("\0");
    const profile = argv.find((a) => a.startsWith("--user-data-dir="))?.slice("--user-data-dir=".length) ?? "";
    const home = /(?:^|\0)HOME=([^\0]*)/.exec(readFileSync(`/proc/${browser[0]}/environ`, "utf8"))?.[1] ?? "";
    expect(existsSync(profile) && existsSync(home)).toBe(true);
    expect(home).toContain("roadnerd-webcheck-home-");
    await server.stop();
    for (let i = 0; i < 300 && browser.some(isLive); i += 1) await new Promise((r) => setTimeout(r, 100));
    expect(browser.filter(isLive)).toEqual([]);
    for (let i = 0; i < 300 && children.some(isLive); i += 1) await new Promise((r) => setTimeout(r, 100));
    expect(children.filter(isLive)).toEqual([]);
    expect([existsSync(profile), existsSync(home)]).toEqual([false, false]);
  }, 120_000);
});
