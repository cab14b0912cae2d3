/** runTool without HTTP: a tool runs only its own commands, with the call's deadline; results keep their type. */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { command } from "../src/define/command.ts";
import { createKit } from "../src/define/kit.ts";
import { type FakeBinaries, fakeBinaries } from "../src/testing/fake-binaries.ts";
import { callTool } from "../src/testing/inject.ts";
import { demoPackage } from "./fixtures/demo-server.ts";

const kit = createKit({ env: { GREETING: z.string().default("hello").describe("what to say") } });
const hangCmd = command("hang", []);
const echoCmd = command("echo", ["from-echo"]);

const hang = kit.defineTool({
  name: "hang_tool",
  summary: "Runs a program that never ends.",
  input: {},
  output: { ok: z.boolean().describe("never") },
  example: {},
  commands: [hangCmd],
  view: () => ({}),
  summarize: () => "never",
  async handler(_input, ctx) {
    await ctx.exec(hangCmd);
    return { ok: true };
  },
});

const thief = kit.defineTool({
  name: "thief_tool",
  summary: "Tries to run a command another tool declared.",
  input: {},
  output: { ok: z.boolean().describe("never") },
  example: {},
  commands: [echoCmd],
  view: () => ({}),
  summarize: () => "never",
  async handler(_input, ctx) {
    await ctx.exec(hangCmd);
    return { ok: true };
  },
});

const greet = kit.defineTool({
  name: "greet_tool",
  summary: "Says the configured greeting (typed config, no cast).",
  input: {},
  output: { said: z.string().describe("the greeting") },
  example: {},
  view: () => ({}),
  summarize: (r) => r.said,
  async handler(_input, ctx) {
    return { said: ctx.config.GREETING };
  },
});

const server = kit.defineServer({ package: demoPackage, instructions: "x", tools: [hang, thief, greet] });
let bin: FakeBinaries;
let dir: string;

beforeAll(async () => {
  bin = await fakeBinaries({ hang: "exec /bin/sleep 30" });
  dir = bin.dir;
});
afterAll(() => bin?.cleanup());
afterEach(() => {
  vi.useRealTimers();
});
const realSetTimeout = globalThis.setTimeout;

describe("runTool", () => {
  it("the server's allowlist is the union of its tools' commands", () => {
    expect(server.commands).toEqual([hangCmd, echoCmd]);
  });

  it("ctx.exec takes the call's deadline: a hanging program ends with E_TIMEOUT on time", async () => {
    // The deadline on the test's clock: not a moment before 200 ms, and at 200 ms however loaded the machine.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    let settled = false;
    const call = callTool(server, hang, { timeout_ms: 200 }, { env: { EXEC_PATH: dir } }).finally(() => {
      settled = true;
    });
    call.catch(() => {});
    await vi.advanceTimersByTimeAsync(199);
    await new Promise((r) => realSetTimeout(r, 100));
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(call).rejects.toMatchObject({ code: "E_TIMEOUT" });
  });

  it("a tool cannot run a command another tool declared", async () => {
    await expect(callTool(server, thief, {}, { env: { EXEC_PATH: dir } })).rejects.toMatchObject({
      code: "E_UNSUPPORTED",
      message: "command not declared by this tool: hang",
    });
  });

  it("ctx.config is the server's own, typed and defaulted by its kit", async () => {
    expect((await callTool(server, greet, {})).said).toBe("hello");
    const r = await callTool(server, greet, {}, { env: { GREETING: "bonjour" } });
    const said: string = r.said;
    expect(said).toBe("bonjour");
    expect(r.summary).toBe("bonjour");
  });
});

describe("refusals are logged with what was refused", () => {
  const probe = kit.defineTool({
    name: "probe_tool",
    summary: "Declares a URL target, so the policy judges it before the handler runs.",
    input: { url: z.string().describe("where") },
    output: { ok: z.boolean().describe("reached") },
    example: { url: "http://127.0.0.1/" },
    targets: { url: "url" },
    view: () => ({}),
    summarize: () => "reached",
    async handler() {
      return { ok: true };
    },
  });
  const def = kit.defineServer({ package: demoPackage, instructions: "test", tools: [probe] });

  it("a target the policy denies is logged as refused, with its target and run_id", async () => {
    const { default: pino } = await import("pino");
    const lines: string[] = [];
    const logger = pino({ level: "info" }, { write: (l: string) => lines.push(l) });
    await expect(
      callTool(def, probe, { url: "http://169.254.169.254/latest/", run_id: "r-9" }, { logger }),
    ).rejects.toMatchObject({ code: "E_FORBIDDEN" });
    const refused = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === "target refused");
    expect(refused).toEqual([
      expect.objectContaining({
        tool: "probe_tool",
        run_id: "r-9",
        code: "E_FORBIDDEN",
        reason: expect.stringContaining("169.254.169.254"),
      }),
    ]);
  });
});
