/** `roadnerd call`'s text for a person: the summary, plain facts one per line, lists as compact tables. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { notesOf, renderResult } from "../src/cli/render.ts";

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
    expect(lines.at(-1)).toBe("  … 5 more rows (--json for all of them)");
    expect(lines).toHaveLength(3 + 1 + 20 + 1);
  });

  it("a bare count says what it counts (the tool's schema), and a list the server cut says how to get more", () => {
    const notes = notesOf({
      hidden: z.number().describe("pseudo filesystems, images and 0-block mounts left out"),
      source: z.string().describe("where the list came from"),
    });
    const text = renderResult(
      { summary: "none full", hidden: 14, source: "proc", mounts: [{ mount: "/" }], truncated: true, omitted: 3 },
      "storage/disk_usage",
      notes,
    );
    expect(text.split("\n")).toEqual([
      "none full",
      "  hidden: 14 (pseudo filesystems, images and 0-block mounts left out)",
      "  source: proc",
      "mounts (1):",
      "  mount",
      "  /",
      "  … 3 more the server did not send (limit= raises its cap)",
    ]);
    // who_uses_port on a free port: no note, no connections in any state (a new user met `note: -` and an empty
    // `connections:` here).
    expect(renderResult({ summary: "nothing uses port 9", note: null, connections: {}, listeners: [] }, "t")).toBe(
      "nothing uses port 9\n  note: none\n  connections: none",
    );
    // A list of plain values as a person writes it (a new user met `servers: ["10.255.255.53"]`).
    expect(renderResult({ servers: ["192.0.2.1", "192.0.2.2"], search: ["corp.example"] }, "t")).toBe(
      "t\n  servers: 192.0.2.1, 192.0.2.2\n  search: corp.example",
    );
    // No schema at hand: the number as it is.
    expect(renderResult({ hidden: 2 }, "t")).toBe("t\n  hidden: 2");
  });
});
