/**
 * Fuzz every tool of every registered server, generated from its own input schema plus hostile mutations
 * (fast-check), over /actions, /mcp and SSE query strings. Every answer is a typed error from the closed set
 * with its own status, or a result that validates against the tool's output schema: never E_INTERNAL, a stack
 * trace or a crash. FUZZ_RUNS sets the runs per tool and surface (CI: 20; the bench's long mode: more).
 */
import type { AddressInfo } from "node:net";
import { ERROR_CODES, ERROR_STATUS, inputJsonSchema } from "@roadnerd/conventions/internal";
import { testApp } from "@roadnerd/conventions/testing";
import { loadServer, selectedServers } from "@roadnerd/registry";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inputArb } from "./lib/schema-arbitrary.ts";
import { type World, worldFor } from "./lib/worlds.ts";

const RUNS = Number(process.env.FUZZ_RUNS ?? 20);
const TRACE = /\n\s+at |ZodError|"issues"|internal error/;
const tally = { calls: 0, ok: 0, typed: 0 };

function checkError(error: { code?: unknown; message?: unknown } | undefined, status?: number): void {
  expect(ERROR_CODES).toContain(error?.code);
  expect(error?.code).not.toBe("E_INTERNAL");
  // Node's parser refusals keep their HTTP status (431 headers too large, 408 request timeout).
  if (status !== undefined && status !== 431 && status !== 408) {
    expect(status).toBe(ERROR_STATUS[error?.code as keyof typeof ERROR_STATUS]);
  }
  expect(typeof error?.message).toBe("string");
}

describe.each(selectedServers())("fuzz $name", (registered) => {
  let world: World | undefined;
  let app: Awaited<ReturnType<typeof testApp>>;
  let base: string;

  beforeAll(async () => {
    world = await worldFor(registered);
    app = await testApp(await loadServer(registered.name), { env: world?.env ?? {} });
    await app.listen({ host: "127.0.0.1", port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app?.close();
    await world?.close();
    console.log(`fuzz ${registered.name}: ${tally.calls} calls, ${tally.ok} results, ${tally.typed} typed errors`);
  });

  it("every tool, over /actions, /mcp and SSE: a valid result or a typed error", async () => {
    const def = await loadServer(registered.name);
    for (const tool of def.tools) {
      const arb = inputArb(inputJsonSchema(tool.inputSchema), tool.example as Record<string, unknown>);
      const valid = (body: unknown) => {
        const parsed = tool.outputSchema.safeParse(body);
        expect(parsed.success, JSON.stringify(body).slice(0, 400)).toBe(true);
        tally.ok += 1;
      };
      await fc.assert(
        fc.asyncProperty(arb, async (input) => {
          tally.calls += 3;
          // /actions
          const res = await fetch(`${base}/actions/${tool.name}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(input),
          });
          const text = await res.text();
          expect(text).not.toMatch(TRACE);
          if (res.status === 200) valid(JSON.parse(text));
          else {
            checkError(JSON.parse(text).error, res.status);
            tally.typed += 1;
          }
          // /mcp
          const rpc = await fetch(`${base}/mcp`, {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: 1,
              method: "tools/call",
              params: { name: tool.name, arguments: input },
            }),
          });
          const answer = await rpc.text();
          expect(answer).not.toMatch(TRACE);
          const msg = JSON.parse(answer) as {
            result?: { isError?: boolean; structuredContent?: unknown; content: Array<{ text: string }> };
            error?: { data?: { code?: string }; message: string };
          };
          if (msg.error) checkError({ code: msg.error.data?.code, message: msg.error.message });
          else if (msg.result?.isError) checkError(JSON.parse(msg.result.content[0]?.text ?? "{}").error);
          else valid(msg.result?.structuredContent);
          // SSE: only an object can be a query string.
          if (!input || typeof input !== "object" || Array.isArray(input)) return;
          const qs = new URLSearchParams(
            Object.entries(input).map(([k, v]): [string, string] => [
              k,
              typeof v === "string" ? v : (JSON.stringify(v) ?? ""),
            ]),
          );
          const sse = await fetch(`${base}/sse/${tool.name}?${qs}`);
          const events = await sse.text();
          expect(events).not.toMatch(TRACE);
          if (sse.status !== 200) return checkError(JSON.parse(events).error, sse.status);
          const blocks = events
            .trim()
            .split("\n\n")
            .map((b) => ({
              event: /^event: (.*)$/m.exec(b)?.[1],
              data: /^data: (.*)$/m.exec(b)?.[1],
            }));
          expect(blocks.at(-1)?.event).toBe("end");
          for (const b of blocks) {
            if (b.event === "message") valid(JSON.parse(b.data ?? "{}"));
            if (b.event === "error") checkError(JSON.parse(b.data ?? "{}"));
          }
        }),
        { numRuns: RUNS },
      );
    }
  }, 180_000);
});
