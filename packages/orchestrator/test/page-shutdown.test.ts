/**
 * Regression (issue 18, left open by ADR 0032): the page's own streams at the gateway (POST /api/triage, GET
 * /api/watch) were cut at shutdown with no last word, while every other surface answers a call it cuts. Now a
 * stream still open when the grace period is over ends with an `error` event carrying E_BUSY, then ends; a
 * triage that finishes within the grace period sends its `result`. Real: the in-process gateway, the built
 * network server for the watch, a planner held by the test for the triage.
 */
import { SHUTDOWN_FLUSH_MS, SHUTDOWN_GRACE_MS } from "@roadnerd/conventions/internal";
import { readRegistry } from "@roadnerd/registry";
import { pollUntil, scaledMs } from "@roadnerd/testkit";
import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { Attacher } from "../src/attach.ts";
import { loadCatalog } from "../src/catalog.ts";
import { type GatewayHttp, serveGatewayHttp } from "../src/gateway-http.ts";
import type { Planner, Reply } from "../src/planners/planner.ts";

let attacher: Attacher | undefined;
let gateway: GatewayHttp | undefined;
afterEach(async () => {
  await gateway?.close();
  await attacher?.close();
});

/** A planner that answers only when the test says (or never): a triage held in flight. */
function heldPlanner() {
  let release: (reply: Reply) => void = () => undefined;
  const reply = new Promise<Reply>((resolve) => {
    release = resolve;
  });
  let asked = false;
  const planner: Planner = {
    name: "held",
    next: () => {
      asked = true;
      return reply;
    },
  };
  return { planner, release: (r: Reply) => release(r), asked: () => asked };
}

async function start(planner: Planner) {
  attacher = new Attacher({ servers: readRegistry() });
  gateway = await serveGatewayHttp({ catalog: await loadCatalog(), attacher, planner: () => planner });
  return new URL(gateway.url).origin;
}

/** An SSE answer read as it comes: its events so far, and whether it ended cleanly or was cut. */
function readEvents(body: AsyncIterable<Buffer>) {
  const events: Array<{ event: string; data: Record<string, unknown> }> = [];
  let text = "";
  const ended = (async () => {
    try {
      for await (const chunk of body) {
        text += chunk.toString();
        const blocks = text.split("\n\n");
        text = blocks.pop() ?? "";
        for (const b of blocks) {
          const event = /^event: (.*)$/m.exec(b)?.[1];
          const data = /^data: (.*)$/m.exec(b)?.[1];
          if (event && data) events.push({ event, data: JSON.parse(data) });
        }
      }
      return "ended";
    } catch (e) {
      return `cut: ${(e as Error).message}`;
    }
  })();
  return { events, ended };
}

const closeDeadline = () => scaledMs(SHUTDOWN_GRACE_MS + SHUTDOWN_FLUSH_MS + 1_000);

describe("the page's streams at shutdown", () => {
  it("a triage still running past the grace period ends with an E_BUSY error event, not a cut", async () => {
    const held = heldPlanner();
    const origin = await start(held.planner);
    const r = await request(`${origin}/api/triage`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ symptom: "no internet" }),
    });
    expect(r.statusCode).toBe(200);
    const stream = readEvents(r.body);
    expect(await pollUntil(held.asked, 10_000)).toBe(true);
    const started = performance.now();
    await gateway?.close();
    expect(performance.now() - started).toBeLessThan(closeDeadline());
    // Before: "cut: other side closed" with no event at all.
    expect(await stream.ended).toBe("ended");
    expect(stream.events.at(-1)).toEqual({ event: "error", data: expect.objectContaining({ code: "E_BUSY" }) });
  }, 30_000);

  it("a triage that finishes within the grace period sends its result", async () => {
    const held = heldPlanner();
    const origin = await start(held.planner);
    const r = await request(`${origin}/api/triage`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ symptom: "no internet" }),
    });
    const stream = readEvents(r.body);
    expect(await pollUntil(held.asked, 10_000)).toBe(true);
    const closing = gateway?.close();
    setTimeout(() => held.release({ label: "wifi", reason: "held, then released" }), SHUTDOWN_GRACE_MS / 4);
    await closing;
    expect(await stream.ended).toBe("ended");
    expect(stream.events.at(-1)).toMatchObject({ event: "result", data: { label: "wifi" } });
  }, 30_000);

  it("a watch under way ends with an E_BUSY error event after its rounds", async () => {
    const origin = await start(heldPlanner().planner);
    const r = await request(`${origin}/api/watch?interval_ms=500&duration_ms=60000`);
    expect(r.statusCode).toBe(200);
    const stream = readEvents(r.body);
    expect(await pollUntil(() => stream.events.some((e) => e.event === "round"), 30_000)).toBe(true);
    const started = performance.now();
    await gateway?.close();
    expect(performance.now() - started).toBeLessThan(closeDeadline());
    // Before: cut after the last round.
    expect(await stream.ended).toBe("ended");
    expect(stream.events.at(-1)).toEqual({ event: "error", data: expect.objectContaining({ code: "E_BUSY" }) });
  }, 60_000);
});
