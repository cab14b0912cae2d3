/** `roadnerd call`'s text for a person: the summary, plain facts one per line, lists as compact tables. */
import { describe, expect, it } from "vitest";
import { renderResult } from "../src/cli/render.ts";

describe("renderResult", () => {
  it("summary, then facts, then a table of the columns that vary, aligned; quiet fields left out", () => {
    const text = renderResult(
      {
        summary: "2 listening sockets",
        run_id: "r-1",
        truncated: false,
        omitted: 0,
        source: "proc",
        sockets: [
          { proto: "tcp", local: "127.0.0.1:8080", port: 8080, pid: 10, process: "java", holders: 1 },
          { proto: "tcp", local: "[::]:443", port: 443, pid: null, process: null, holders: 1 },
        ],
      },
      "ports/listening_sockets",
    );
    expect(text.split("\n")).toEqual([
      "2 listening sockets",
      "  source: proc",
      "sockets (2):",
      "  local           port  pid  process",
      "  127.0.0.1:8080  8080  10   java",
      "  [::]:443        443   -    -",
    ]);
  });

  it("an object field on one line as `key value`, long cells cut, and a long list says how many more", () => {
    const rows = Array.from({ length: 25 }, (_, i) => ({ name: `dir-${i}-${"x".repeat(40)}`, size_mb: i }));
    const text = renderResult({ scanned: { dirs: 3, files: 7 }, entries: rows }, "storage/top_consumers");
    const lines = text.split("\n");
    expect(lines[0]).toBe("storage/top_consumers");
    expect(lines[1]).toBe("  scanned: dirs 3, files 7");
    expect(lines[4]).toBe(`  ${"dir-0-".padEnd(27, "x")}…  0`);
    expect(lines.at(-1)).toBe("  … 5 more (--json for everything)");
    expect(lines).toHaveLength(3 + 1 + 20 + 1);
  });
});
