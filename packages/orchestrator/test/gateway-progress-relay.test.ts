/**
 * A server's tool through the gateway relays its progress (ADR 0030, relay): storage__top_consumers on a tree of
 * 50,000 files, with the SDK client's `onprogress` (a progressToken), over the in-process HTTP gateway and the
 * built `roadnerd mcp` over stdio. With a token: increasing notifications/progress with the walk's counts, all
 * before the result, and the result the no-token call gets (POST /actions); without one, none. A path outside
 * STORAGE_ROOTS is the same typed error either way.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { REPO_ROOT, readRegistry } from "@roadnerd/registry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Attacher } from "../src/attach.ts";
import { loadCatalog } from "../src/catalog.ts";
import { type GatewayHttp, serveGatewayHttp } from "../src/gateway-http.ts";
import { RulesPlanner } from "../src/planners/rules.ts";

let root: string;
let many: string;
const closers: Array<() => Promise<void>> = [];

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "rn-gateway-relay-"));
  many = join(root, "many");
  // 50 directories of 1,000 empty files: a walk that reports at least once.
  for (let d = 0; d < 50; d++) {
    const dir = join(many, `d${d}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < 1000; f++) writeFileSync(join(dir, `f${f}`), "");
  }
}, 120_000);

afterAll(async () => {
  for (const close of closers.reverse()) await close();
  rmSync(root, { recursive: true, force: true });
});

async function httpClient(): Promise<Client> {
  const attacher = new Attacher({ servers: readRegistry(), envFor: () => ({ STORAGE_ROOTS: root }) });
  const gateway: GatewayHttp = await serveGatewayHttp({
    catalog: await loadCatalog(),
    attacher,
    planner: () => new RulesPlanner(),
  });
  closers.push(
    () => attacher.close(),
    () => gateway.close(),
  );
  const client = new Client({ name: "gateway-relay-http", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)));
  return client;
}

async function stdioClient(): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(REPO_ROOT, "packages/orchestrator/dist/main.js"), "mcp"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", STORAGE_ROOTS: root },
    stderr: "pipe",
  });
  const client = new Client({ name: "gateway-relay-stdio", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

describe.each([
  ["http", httpClient],
  ["stdio", stdioClient],
] as const)("storage__top_consumers progress relayed over %s", (_transport, open) => {
  it("with a token: increasing progress before the /actions result; without: none; errors alike", async () => {
    const client = await open();
    const errors: Error[] = [];
    // A notification after the result, or one for a token this client never sent, is reported here.
    client.onerror = (e) => errors.push(e);
    try {
      const name = "storage__top_consumers";
      const args = { path: many, n: 3, timeout_ms: 15_000 };
      const seen: Array<Progress | "result"> = [];
      const relayed = await client.callTool({ name, arguments: args }, undefined, {
        onprogress: (p) => seen.push(p),
      });
      seen.push("result");
      expect(relayed.isError, JSON.stringify(relayed.content)).toBeFalsy();
      expect(relayed.structuredContent).toMatchObject({ path: many, truncated: false, scanned: { files: 50_000 } });
      const progress = seen.filter((p): p is Progress => p !== "result");
      // The walk reports once right after its first slice, then every 250 ms: how many more come depends on how
      // fast this machine walks 50,000 files (a warm cache on an idle machine: none). The order of several
      // events is relay-progress.test.ts's, against a server that sends three.
      expect(progress.length).toBeGreaterThanOrEqual(1);
      expect(seen.at(-1)).toBe("result");
      const values = progress.map((p) => p.progress);
      for (let i = 1; i < values.length; i++) expect(values[i]).toBeGreaterThan(values[i - 1] as number);
      // The walk's counts, as the server's own /mcp sends them.
      for (const p of progress) expect(p.message).toMatch(/^dirs \d+, files \d+, bytes \d+$/);
      const files = progress.map((p) => Number(/files (\d+)/.exec(p.message ?? "")?.[1]));
      expect([...files].sort((a, b) => a - b)).toEqual(files);

      // Without a token: POST /actions, the same answer, no notification (one would reach onerror: no token of
      // this client's is open).
      const plain = await client.callTool({ name, arguments: args });
      expect(plain.structuredContent).toEqual(relayed.structuredContent);
      expect(plain.content).toEqual(relayed.content);

      // Outside STORAGE_ROOTS: the same typed error with a token (refused before the stream) and without.
      const outside = { path: "/etc", n: 3 };
      const refusedWith = await client.callTool({ name, arguments: outside }, undefined, { onprogress: () => {} });
      const refusedWithout = await client.callTool({ name, arguments: outside });
      expect(refusedWith.isError).toBe(true);
      const error = JSON.parse(String((refusedWith.content as Array<{ text: string }>)[0]?.text)) as {
        error: { code: string };
      };
      expect(error.error.code).toMatch(/^E_/);
      expect(refusedWith.content).toEqual(refusedWithout.content);
      expect(errors.map((e) => e.message)).toEqual([]);
    } finally {
      await client.close();
    }
  }, 120_000);
});
