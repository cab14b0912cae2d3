/** runStream without HTTP: bounded by duration, each message checked and stamped, work stopped when the consumer leaves. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { defineServer } from "../src/define/kit.ts";
import { defineStream } from "../src/define/stream.ts";
import { collectStream } from "../src/testing/inject.ts";
import { demoPackage, demoServer, tickLoops, ticks } from "./fixtures/demo-server.ts";

const wrong = defineStream({
  name: "wrong_shape",
  summary: "Emits a message outside its schema.",
  input: {},
  message: { n: z.number().describe("a number") },
  example: {},
  summarize: () => "never",
  async run(_input, ctx) {
    await ctx.emit({ n: "one" } as never);
  },
});
const wrongServer = defineServer({ package: demoPackage, instructions: "x", tools: [], streams: [wrong] });

// Ticks, durations and aborts run on the test's clock: the counts are exact, whatever the machine's load.
const fakeClock = () => vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
afterEach(() => {
  vi.useRealTimers();
});

describe("runStream", () => {
  it("sends checked messages with their summary and run_id until the duration ends", async () => {
    fakeClock();
    const running = collectStream(demoServer, ticks, { interval_ms: 20, duration_ms: 150, run_id: "s1" });
    await vi.advanceTimersByTimeAsync(150);
    const { messages, end } = await running;
    expect(end).toBe("duration");
    // Ticks at 0, 20, … 140 ms.
    expect(messages.map((m) => m.n)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(messages[0]).toEqual({ n: 1, summary: "tick 1", run_id: "s1" });
    expect(tickLoops.active).toBe(0);
  });

  it("stops the work when the consumer takes no more", async () => {
    const { messages, end } = await collectStream(
      demoServer,
      ticks,
      { interval_ms: 10, duration_ms: 5000 },
      { max: 2 },
    );
    expect(end).toBe("closed");
    expect(messages.map((m) => m.n)).toEqual([1, 2]);
    expect(tickLoops.active).toBe(0);
  });

  it("stops when the consumer's signal aborts", async () => {
    fakeClock();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 60);
    const running = collectStream(
      demoServer,
      ticks,
      { interval_ms: 10, duration_ms: 5000 },
      { signal: controller.signal },
    );
    await vi.advanceTimersByTimeAsync(60);
    const { messages, end } = await running;
    expect(end).toBe("closed");
    expect(messages.map((m) => m.n)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(tickLoops.active).toBe(0);
  });

  it("refuses bad input before any work, and a message outside the schema is E_INTERNAL", async () => {
    await expect(collectStream(demoServer, ticks, { interval_ms: 1 })).rejects.toMatchObject({
      code: "E_INVALID_INPUT",
    });
    await expect(collectStream(wrongServer, wrong, {})).rejects.toMatchObject({ code: "E_INTERNAL" });
  });
});
