/**
 * The package's entry, pinned: `roadnerd` is a command, and nothing in the repository imports this package
 * (its tests read its modules directly), so the entry is what runs it. Widening the list is a decision.
 */
import { describe, expect, it } from "vitest";

describe("@roadnerd/orchestrator entry", () => {
  it("exports exactly this list", async () => {
    const entry = await import("@roadnerd/orchestrator");
    expect(Object.keys(entry).sort()).toEqual(["runCli"]);
  });
});
