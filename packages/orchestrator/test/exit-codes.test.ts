/** One exit-code table: what each error code exits with, and the README's table says the same. */
import { readFileSync } from "node:fs";
import { ERROR_CODES } from "@roadnerd/conventions/internal";
import { describe, expect, it } from "vitest";
import { EXIT, exitCodeFor } from "../src/cli/exit-codes.ts";
import { ORCHESTRATOR_CODES } from "../src/errors.ts";

describe("exit codes", () => {
  it("usage and invalid input are 2 wherever they come from; every other failure is 1", () => {
    const usage = ["E_USAGE", "E_INVALID_INPUT", "E_UNKNOWN_TOOL", "E_NOT_ONE_JSON", "E_BAD_SHAPE", "E_BAD_LABEL"];
    for (const code of [...ORCHESTRATOR_CODES, ...ERROR_CODES]) {
      expect([code, exitCodeFor(code)]).toEqual([code, usage.includes(code) ? EXIT.usage : EXIT.failed]);
    }
    expect(exitCodeFor("E_SOMETHING_NEW")).toBe(EXIT.failed);
  });

  it("the README's table lists exactly the codes of EXIT", () => {
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const section = readme.slice(readme.indexOf("## Exit codes"));
    const rows = [...section.matchAll(/^\| (\d+) \|/gm)].map((m) => Number(m[1]));
    expect(rows).toEqual(Object.values(EXIT));
  });
});
