/**
 * Regression (issue 18, SIGTERM to `roadnerd up`): a server's close answered a call still running with E_BUSY
 * but never cancelled its work, which went on to the call's own deadline (an HTTP probe held by a silent
 * target, 15 s): a standalone server exits anyway, `up` (every server in one process) waited for it. Now the
 * runtime's close aborts every call's signal once the shutdown answers are out. Real sockets.
 */
import type { AddressInfo } from "node:net";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineServer } from "../src/define/kit.ts";
import { defineTool } from "../src/define/tool.ts";
import { buildHttpApp } from "../src/http/http-app.ts";
import { testRuntime } from "../src/testing/inject.ts";
import { demoPackage } from "./fixtures/demo-server.ts";

/** When the held call's signal aborted (undefined: not yet), and how many calls are at it. */
const seen: { abortedAt?: number; holding: number } = { holding: 0 };

/** Waits for its signal only, as a probe to a target that never answers waits for its socket. */
const held = defineTool({
  name: "held",
  summary: "Wait until cancelled, as work held by a silent target.",
  input: {},
  output: { cancelled: z.boolean().describe("always true") },
  example: {},
  view: () => ({}),
  summarize: () => "cancelled",
  async handler(_input, ctx) {
    seen.holding += 1;
    await new Promise<void>((resolve) =>
      ctx.signal.addEventListener("abort", () => {
        seen.abortedAt = performance.now();
        resolve();
      }),
    );
    return { cancelled: true };
  },
});

const server = defineServer({ package: demoPackage, instructions: "held", tools: [held], streams: [] });

describe("a server's close", () => {
  it("cancels a call still running after its E_BUSY answer, not at the call's own deadline (15 s)", async () => {
    const app = await buildHttpApp(testRuntime(server));
    await app.listen({ host: "127.0.0.1", port: 0 });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const answer = request(`${base}/actions/held`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ timeout_ms: 15_000 }),
    }).then(async (r) => ({ status: r.statusCode, text: await r.body.text() }));
    for (let i = 0; i < 500 && seen.holding === 0; i += 1) await new Promise((r) => setTimeout(r, 20));
    expect(seen.holding).toBe(1);
    await app.close();
    const closedAt = performance.now();
    const { status, text } = await answer;
    expect({ status, busy: text.includes("E_BUSY") }).toEqual({ status: 503, busy: true });
    // Aborted by the time the close is done (before: still running, until its 15 s deadline).
    expect(seen.abortedAt).toBeDefined();
    expect(seen.abortedAt ?? Number.POSITIVE_INFINITY).toBeLessThanOrEqual(closedAt);
  }, 30_000);
});
