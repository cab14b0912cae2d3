/**
 * The gateway's triage tool sends one notifications/progress per step to a caller that passed a progressToken
 * (the SDK client's `onprogress`), over Streamable HTTP (in-process gateway) and stdio (the built `roadnerd mcp`
 * bin), in this sealed world (loopback only: the rules planner ends at `wifi` after two calls). The steps are
 * the lines of the run's JSONL log, in order, before the result; without a token, none. A relayed server tool
 * that reports no progress answers a token with its result alone (relayed progress:
 * gateway-progress-relay.test.ts).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
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

let logDir: string;
let attacher: Attacher | undefined;
let gateway: GatewayHttp | undefined;

beforeAll(async () => {
  logDir = await mkdtemp(join(tmpdir(), "rn-gateway-progress-"));
});

afterAll(async () => {
  await gateway?.close();
  await attacher?.close();
  await rm(logDir, { recursive: true, force: true });
});

async function httpClient(): Promise<Client> {
  attacher = new Attacher({ servers: readRegistry() });
  gateway = await serveGatewayHttp({
    catalog: await loadCatalog(),
    attacher,
    planner: () => new RulesPlanner(),
    logDir,
  });
  const client = new Client({ name: "gateway-progress-http", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)));
  return client;
}

async function stdioClient(): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(REPO_ROOT, "packages/orchestrator/dist/main.js"), "mcp"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ROADNERD_LOG_DIR: logDir },
    stderr: "pipe",
  });
  const client = new Client({ name: "gateway-progress-stdio", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

describe.each([
  ["http", httpClient],
  ["stdio", stdioClient],
] as const)("triage progress over %s", (transport, open) => {
  it("one notification per step, in order, before the result; none without a token", async () => {
    const client = await open();
    const errors: Error[] = [];
    // A notification after the result, or one for a token this client never sent, is reported here.
    client.onerror = (e) => errors.push(e);
    try {
      const seen: Array<Progress | "result"> = [];
      const runId = `rn-progress-${transport}`;
      const r = await client.callTool(
        { name: "triage", arguments: { symptom: "no internet", run_id: runId } },
        undefined,
        {
          onprogress: (p) => seen.push(p),
        },
      );
      seen.push("result");
      const outcome = r.structuredContent as { label: string; steps: number; run_id: string };
      // In this world the rules end at wifi after two calls; what is checked here holds for any run.
      expect(outcome).toMatchObject({ label: expect.any(String), run_id: runId });
      expect(outcome.steps).toBeGreaterThanOrEqual(1);
      const progress = seen.filter((p): p is Progress => p !== "result");
      expect(seen.at(-1)).toBe("result");
      // One notification per line of the run's log (each call, then the verdict), in order: progress is the step.
      const lines = (await readFile(join(logDir, `triage-${runId}.jsonl`), "utf8")).trim().split("\n");
      const logged = lines.map((l) => JSON.parse(l) as { step: number; requested_tool: string | null });
      expect(logged).toHaveLength(outcome.steps + 1);
      expect(progress.map((p) => p.progress)).toEqual(logged.map((l) => l.step));
      for (const [i, l] of logged.entries()) {
        // The line the CLI prints for the step: the tool it called, or the verdict's label.
        expect(progress[i]?.message).toContain(l.requested_tool ?? `verdict: ${outcome.label}`);
      }

      const plain = await client.callTool({ name: "triage", arguments: { symptom: "no internet" } });
      expect(plain.structuredContent).toMatchObject({ label: outcome.label });

      // A server's tool relayed by the gateway that reports no progress: with a token it answers, no notification.
      const relayed: Progress[] = [];
      const route = await client.callTool({ name: "network__route_info", arguments: {} }, undefined, {
        onprogress: (p) => relayed.push(p),
      });
      expect(route.isError).toBeFalsy();
      expect(route.structuredContent).toMatchObject({ default_gateway: null });
      expect(relayed).toEqual([]);
      expect(errors.map((e) => e.message)).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
