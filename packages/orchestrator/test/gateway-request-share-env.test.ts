/**
 * The gateway's per-client share of MCP requests that are not tool calls (ADR 0039) was a constant (8) while every
 * other bound had a variable: ROADNERD_CLIENT_REQUESTS sets it, validated at start (exit 2 otherwise).
 */
import { connect, type Socket } from "node:net";
import { readRegistry } from "@roadnerd/registry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Attacher } from "../src/attach.ts";
import { loadCatalog } from "../src/catalog.ts";
import { EXIT } from "../src/cli/exit-codes.ts";
import { runCli } from "../src/cli/main.ts";
import { DEFAULT_CLIENT_REQUESTS, loadOrchestratorConfig } from "../src/config.ts";
import { type GatewayHttp, serveGatewayHttp } from "../src/gateway-http.ts";
import { RulesPlanner } from "../src/planners/rules.ts";

let attacher: Attacher;
let gateway: GatewayHttp;
const sockets: Socket[] = [];

beforeAll(async () => {
  const catalog = await loadCatalog();
  attacher = new Attacher({ servers: readRegistry() });
  const before = process.env.ROADNERD_CLIENT_REQUESTS;
  process.env.ROADNERD_CLIENT_REQUESTS = "2";
  try {
    gateway = await serveGatewayHttp({ catalog, attacher, planner: () => new RulesPlanner() });
  } finally {
    if (before === undefined) delete process.env.ROADNERD_CLIENT_REQUESTS;
    else process.env.ROADNERD_CLIENT_REQUESTS = before;
  }
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await gateway?.close();
  await attacher?.close();
});

/** A tools/list POST whose last byte is held back: it holds a request slot until then. Its answer, once closed. */
function heldRequest(port: number): { answer: Promise<string> } {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
  const socket = connect(port, "127.0.0.1");
  sockets.push(socket);
  let text = "";
  socket.on("data", (c: Buffer) => {
    text += c.toString("latin1");
  });
  socket.on("error", () => undefined);
  const head =
    `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n` +
    `accept: application/json, text/event-stream\r\ncontent-length: ${body.length}\r\n\r\n`;
  socket.write(head + body.slice(0, -1));
  return { answer: new Promise((resolve) => socket.once("close", () => resolve(text))) };
}

describe("ROADNERD_CLIENT_REQUESTS", () => {
  it("sets the share: with 2, of 6 requests a client holds in flight 4 are 503 E_BUSY at once", async () => {
    const port = Number(new URL(gateway.url).port);
    const requests = Array.from({ length: 6 }, () => heldRequest(port));
    // The 2 let in wait for their last byte (never sent): only the refused ones close, each with its answer.
    const refused: string[] = [];
    await new Promise<void>((resolve) => {
      for (const r of requests)
        void r.answer.then((text) => {
          refused.push(text);
          if (refused.length === 4) resolve();
        });
    });
    for (const text of refused) {
      expect(text).toMatch(/^HTTP\/1\.1 503 /);
      expect(text).toContain("E_BUSY");
      expect(text).toContain("this client already has 2 requests in flight");
    }
  });

  it("defaults to 8, and takes a whole number 1-1000 only: anything else stops the start (exit 2)", async () => {
    expect(loadOrchestratorConfig({}).ROADNERD_CLIENT_REQUESTS).toBe(DEFAULT_CLIENT_REQUESTS);
    expect(DEFAULT_CLIENT_REQUESTS).toBe(8);
    for (const bad of ["0", "-1", "2.5", "many", "1001"]) {
      expect(() => loadOrchestratorConfig({ ROADNERD_CLIENT_REQUESTS: bad })).toThrow(
        /ROADNERD_CLIENT_REQUESTS: expected a whole number of requests, 1-1000/,
      );
    }
    const env = { ROADNERD_CLIENT_REQUESTS: "0" };
    expect(await runCli(["mcp", "--http", "--port", "0"], env)).toBe(EXIT.usage);
  });
});
