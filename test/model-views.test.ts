/**
 * Every registered tool's model view, on results its real runs gave (test/fixtures/recorded, recorded by
 * `pnpm record-results` in the README worlds, behind five kinds of captive portal, and with the largest answers
 * this machine gives: a deep walk of /usr, forty listening sockets, every node process): each recorded result
 * still fits its tool's schema, and its view opens with the whole summary (the verdict) and stays within
 * VIEW_BUDGET_TOKENS, counted with the Llama 3 tokenizer. A live server's MCP answer carries the same view.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { AnyTool } from "@roadnerd/conventions";
import { VIEW_BUDGET_TOKENS, viewOf } from "@roadnerd/conventions/internal";
import { loadServer, REPO_ROOT, readRegistry } from "@roadnerd/registry";
import { openMcp } from "@roadnerd/testkit";
import { countTokens } from "@roadnerd/testkit/tokens";
import { describe, expect, it } from "vitest";
import { z } from "zod";

const recorded = z.array(
  z.object({ tool: z.string(), input: z.record(z.string(), z.unknown()), result: z.record(z.string(), z.unknown()) }),
);

const servers = readRegistry();
const tools = new Map<string, AnyTool>();
const cases: Array<{ id: string; input: string; tool: AnyTool; result: Record<string, unknown> }> = [];
for (const s of servers) {
  const def = await loadServer(s.name);
  for (const t of def.tools) tools.set(`${s.name}/${t.name}`, t);
  const results = recorded.parse(
    JSON.parse(readFileSync(join(REPO_ROOT, "test/fixtures/recorded", `${s.name}.json`), "utf8")),
  );
  for (const r of results) {
    const tool = def.tools.find((t) => t.name === r.tool);
    if (!tool) throw new Error(`${s.name}.json records ${r.tool}, which ${s.name} no longer has`);
    cases.push({ id: `${s.name}/${r.tool}`, input: JSON.stringify(r.input), tool, result: r.result });
  }
}

describe("model views", () => {
  it("every registered tool has recorded results to read", () => {
    const seen = new Set(cases.map((c) => c.id));
    expect([...tools.keys()].filter((id) => !seen.has(id))).toEqual([]);
  });

  it.each(cases)("$id $input: verdict first, within the budget", ({ tool, result }) => {
    const view = viewOf(tool, result);
    expect(view, "the recorded result no longer fits the tool's schema: run pnpm record-results").toBeDefined();
    const summary = z.string().min(1).parse(result.summary);
    expect(view?.split("\n")[0]).toBe(summary.replace(/\s+/g, " ").trim());
    expect(countTokens(view ?? ""), view).toBeLessThanOrEqual(VIEW_BUDGET_TOKENS);
  });

  it("a view over budget or without its verdict fails the same checks", () => {
    const [first] = cases;
    if (!first) throw new Error("no recorded results");
    const words = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`k${i}`, "word ".repeat(30)]));
    const long = { ...first.tool, view: () => words };
    expect(countTokens(viewOf(long, first.result) ?? "")).toBeGreaterThan(VIEW_BUDGET_TOKENS);
    expect(viewOf(first.tool, { ...first.result, summary: undefined })).toBeUndefined();
  });

  it("a live server answers MCP with the view as text and the full result as structuredContent", async () => {
    const mcp = await openMcp("http", "storage", { env: { STORAGE_ROOTS: "/usr" } });
    try {
      const args = { path: "/usr", depth: 3, n: 100, timeout_ms: 5000 };
      const answer = await mcp.client.callTool({ name: "top_consumers", arguments: args });
      const structured = z.record(z.string(), z.unknown()).parse(answer.structuredContent);
      const tool = tools.get("storage/top_consumers");
      if (!tool) throw new Error("storage/top_consumers is not registered");
      const view = viewOf(tool, structured) ?? "";
      expect(answer.content).toEqual([{ type: "text", text: view }]);
      expect(view.startsWith(`${structured.summary}\n`)).toBe(true);
      expect(countTokens(view)).toBeLessThanOrEqual(VIEW_BUDGET_TOKENS);
      expect(JSON.stringify(structured).length).toBeGreaterThan(view.length * 4);
    } finally {
      await mcp.close();
    }
  });
});
