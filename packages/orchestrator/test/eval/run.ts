/**
 * `pnpm eval`: every scenario with the rules and scripted planners (and openai when ROADNERD_OPENAI_URL and
 * ROADNERD_OPENAI_MODEL are set and reachable from the scenario namespace), then docs/eval/results.json,
 * docs/eval/README.md and docs/eval/chart.svg. Run sealed (the root script does).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { REPO_ROOT } from "@roadnerd/registry";
import { type PlannerName, type RunResult, runScenario } from "./harness.ts";
import { renderMarkdown, renderSvg, summarize } from "./report.ts";
import { SCENARIOS } from "./scenarios.ts";

const planners: PlannerName[] = ["rules", "scripted"];
const model = process.env.ROADNERD_OPENAI_URL && process.env.ROADNERD_OPENAI_MODEL;
if (model) planners.push("openai", "baseline");
const only = process.argv.slice(2);
const results: RunResult[] = [];
for (const scenario of SCENARIOS.filter((s) => only.length === 0 || only.includes(s.name))) {
  process.stderr.write(`${scenario.name} …\n`);
  const openai = model
    ? {
        openai: {
          url: process.env.ROADNERD_OPENAI_URL as string,
          model: process.env.ROADNERD_OPENAI_MODEL as string,
          profile: process.env.ROADNERD_MODEL_PROFILE === "13b" ? ("13b" as const) : ("3b" as const),
        },
      }
    : {};
  for (const r of await runScenario(scenario, { planners, ...openai })) {
    results.push(r);
    process.stderr.write(
      `  ${r.planner}: ${r.label} ${r.correct ? "ok" : `WRONG (expected ${r.expected})`} in ${r.steps} steps, ${r.time_to_label_ms} ms\n`,
    );
  }
}
const out = join(REPO_ROOT, "docs/eval");
await mkdir(out, { recursive: true });
const meta = { date: new Date().toISOString().slice(0, 10), node: process.versions.node };
await writeFile(
  join(out, "results.json"),
  `${JSON.stringify({ ...meta, summary: summarize(results), runs: results }, null, 2)}\n`,
);
const report = renderMarkdown(results, meta);
await writeFile(join(out, "README.md"), report);
// The tables on stdout too: per planner and per scenario, as the report has them.
process.stdout.write(
  `${report
    .split("\n")
    .filter((l) => l.startsWith("|") || l.startsWith("## Per"))
    .join("\n")}\n`,
);
await writeFile(join(out, "chart.svg"), renderSvg(results));
process.stderr.write(`wrote docs/eval/{results.json,README.md,chart.svg}\n`);
if (results.some((r) => !r.correct)) process.exitCode = 1;
