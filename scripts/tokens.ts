/**
 * `pnpm tokens`: what a small model is handed, in Llama 3 tokens (a 3B-class model's own tokenizer) beside
 * bytes: the planner's catalog, the gateway's tools/list per tool, and the largest model views of the results
 * real runs gave (test/fixtures/recorded) against the JSON they replace. Nothing is spawned.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { modelView } from "@roadnerd/conventions/internal";
import { loadServer, REPO_ROOT, readRegistry } from "@roadnerd/registry";
import { countTokens, TOKENIZER } from "@roadnerd/testkit/tokens";
import { Attacher } from "../packages/orchestrator/src/attach.ts";
import { loadCatalog } from "../packages/orchestrator/src/catalog.ts";
import { gatewaySource } from "../packages/orchestrator/src/gateway.ts";
import { RulesPlanner } from "../packages/orchestrator/src/planners/rules.ts";

const out = (line = "") => process.stdout.write(`${line}\n`);
const row = (cells: Array<string | number>, widths: number[]) =>
  cells
    .map((c, i) => (typeof c === "number" ? String(c).padStart(widths[i] ?? 8) : c.padEnd(widths[i] ?? 8)))
    .join("  ");

const catalog = await loadCatalog();
const text = catalog.text();
out(`tokenizer: ${TOKENIZER}`);
out(`planner catalog: ${countTokens(text)} tokens, ${Buffer.byteLength(text)} bytes, ${catalog.entries.length} tools`);
out();

const attacher = new Attacher({ servers: readRegistry() });
const source = gatewaySource({ catalog, attacher, planner: () => new RulesPlanner() });
const widths = [36, 8, 8];
out(row(["gateway tools/list", "tokens", "bytes"], widths));
let tokens = 0;
for (const t of source.tools) {
  const json = JSON.stringify(t.listed);
  tokens += countTokens(json);
  out(row([t.listed.name, countTokens(json), Buffer.byteLength(json)], widths));
}
const list = JSON.stringify({ tools: source.tools.map((t) => t.listed) });
out(row([`total (${source.tools.length} tools)`, countTokens(list), Buffer.byteLength(list)], widths));
out(
  row(
    [
      "mean per tool",
      Math.round(tokens / source.tools.length),
      Math.round(Buffer.byteLength(list) / source.tools.length),
    ],
    widths,
  ),
);
await attacher.close();
out();

type Seen = { id: string; input: string; view: number; json: number };
const seen: Seen[] = [];
for (const s of readRegistry()) {
  const def = await loadServer(s.name);
  const recorded: Array<{ tool: string; input: unknown; result: Record<string, unknown> }> = JSON.parse(
    readFileSync(join(REPO_ROOT, "test/fixtures/recorded", `${s.name}.json`), "utf8"),
  );
  for (const r of recorded) {
    const tool = def.tools.find((t) => t.name === r.tool);
    if (!tool) continue;
    const view = modelView(tool, r.result);
    seen.push({
      id: `${s.name}/${r.tool}`,
      input: JSON.stringify(r.input),
      view: countTokens(view),
      json: countTokens(JSON.stringify(r.result)),
    });
  }
}
seen.sort((a, b) => b.view - a.view);
const vw = [58, 11, 11];
out(row(["largest model views (recorded real results)", "view tok", "JSON tok"], vw));
for (const s of seen.slice(0, 5)) out(row([`${s.id} ${s.input}`.slice(0, 58), s.view, s.json], vw));
const largestJson = [...seen].sort((a, b) => b.json - a.json)[0];
if (largestJson) out(`largest JSON result: ${largestJson.id} ${largestJson.json} tokens (view ${largestJson.view})`);
out(`views over 120 tokens: ${seen.filter((s) => s.view > 120).length} of ${seen.length}`);
