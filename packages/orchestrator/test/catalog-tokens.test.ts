/**
 * The planner's catalog is the whole of what a small model knows about the tools: every registered tool, one line
 * each, within CATALOG_BUDGET_TOKENS counted with the Llama 3 tokenizer (a 3B-class model's own).
 */
import { countTokens } from "@roadnerd/testkit/tokens";
import { describe, expect, it } from "vitest";
import { CATALOG_BUDGET_TOKENS, loadCatalog } from "../src/catalog.ts";

describe("catalog budget", () => {
  it("every tool's line together fits the budget", async () => {
    const catalog = await loadCatalog();
    expect(catalog.unavailable).toEqual([]);
    const text = catalog.text();
    expect(text.split("\n")).toHaveLength(catalog.entries.length);
    expect(countTokens(text)).toBeLessThanOrEqual(CATALOG_BUDGET_TOKENS);
  });

  it("the count is a real tokenizer's: a longer catalog is counted over the budget", async () => {
    const text = (await loadCatalog()).text();
    expect(countTokens(`${text}\n${text}`)).toBeGreaterThan(CATALOG_BUDGET_TOKENS);
    expect(countTokens("network/dns_resolve")).toBeGreaterThan(1);
  });
});
