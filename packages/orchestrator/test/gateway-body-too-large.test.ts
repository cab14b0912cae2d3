/**
 * Regression (issue 18, A11b): at the gateway a body over the limit was 413 E_INVALID_INPUT on /mcp (a code
 * whose status is 400) and 400 on the page's /api/call and /api/triage. Now 413 E_TOO_LARGE on each, answered
 * at once (before any body is read when Content-Length says so; as the chunks pass the limit without it), and
 * the connection closed while the client still has the rest to send. No server is attached for it.
 */
import { readRegistry } from "@roadnerd/registry";
import { type Oversized, sendOversized } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Attacher } from "../src/attach.ts";
import { loadCatalog } from "../src/catalog.ts";
import { type GatewayHttp, serveGatewayHttp } from "../src/gateway-http.ts";
import { RulesPlanner } from "../src/planners/rules.ts";

let attacher: Attacher;
let gateway: GatewayHttp;
let port: number;

beforeAll(async () => {
  const catalog = await loadCatalog();
  attacher = new Attacher({ servers: readRegistry() });
  gateway = await serveGatewayHttp({ catalog, attacher, planner: () => new RulesPlanner() });
  port = Number(new URL(gateway.url).port);
});
afterAll(async () => {
  await gateway?.close();
  await attacher?.close();
});

async function expectCutEarly(answer: Oversized): Promise<void> {
  expect(answer.head).toMatch(/^HTTP\/1\.1 413 /);
  expect(answer.head.toLowerCase()).toContain("connection: close");
  expect(await answer.closed).toContain('"E_TOO_LARGE"');
}

const MIB = 1024 * 1024;

describe("a body over the gateway's limit", () => {
  it("/mcp (1 MiB): 100 MB announced, a little sent", async () => {
    await expectCutEarly(await sendOversized(port, "/mcp", { contentLength: 100 * MIB, bytes: 64 * 1024 }));
  });

  it("/mcp: chunked, without Content-Length", async () => {
    await expectCutEarly(await sendOversized(port, "/mcp", { chunked: true, bytes: MIB + 64 * 1024 }));
  });

  for (const path of ["/api/call/network/route_info", "/api/triage"]) {
    it(`${path} (64 KiB): 100 MB announced, nothing of it sent`, async () => {
      await expectCutEarly(await sendOversized(port, path, { contentLength: 100 * MIB, bytes: 0 }));
    });

    it(`${path}: chunked, without Content-Length`, async () => {
      await expectCutEarly(await sendOversized(port, path, { chunked: true, bytes: 128 * 1024 }));
    });
  }

  it("attached no server for any of it", () => {
    expect(readRegistry().filter((s) => attacher.isRunning(s.name))).toEqual([]);
  });
});
