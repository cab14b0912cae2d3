/**
 * The help/version fast path (cli/quick.ts) answers exactly what the full parser answers, for the lines it
 * takes, and leaves every other line to it.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { runCli } from "../src/cli/main.ts";
import { quickAnswer } from "../src/cli/quick.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

async function full(argv: string[]): Promise<{ text: string; code: number }> {
  let text = "";
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    text += String(chunk);
    return true;
  });
  const code = await runCli(argv, {});
  vi.restoreAllMocks();
  return { text, code };
}

describe("roadnerd's help and version before the rest loads", () => {
  const taken = [
    [],
    ["--help"],
    ["-h"],
    ["help"],
    ["--version"],
    ["-V"],
    ["version"],
    ["help", "call"],
    ["help", "up"],
    ["triage", "--help"],
    ["mcp", "-h"],
  ];
  it.each(taken)("%s: the same text and exit code as the full parser", async (...argv: string[]) => {
    const quick = quickAnswer(argv);
    expect(quick).toBeDefined();
    const answer = quick as { text: string; code: number };
    const text = answer.text.endsWith("\n") ? answer.text : `${answer.text}\n`;
    expect({ text, code: answer.code }).toEqual(await full(argv));
  });

  it("leaves every other line to the full parser, a wrong help topic included", () => {
    for (const argv of [
      ["help", "nope"],
      ["call", "network/route_info"],
      ["list", "--json"],
      ["nope", "--help"],
      ["help", "call", "x"],
    ]) {
      expect(quickAnswer(argv)).toBeUndefined();
    }
  });
});
