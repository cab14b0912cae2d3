/**
 * `roadnerd eval [scenario…] [--out dir]` (`pnpm eval`): every scenario (or the named ones) with the rules and
 * scripted planners, and openai plus its no-tools baseline, each per profile (3b, 13b, 20b) and each followed
 * by the brainstorm step, when ROADNERD_OPENAI_URL and ROADNERD_OPENAI_MODEL are set (else those rows say
 * "not run"); then results.json, README.md and chart.svg in the output directory (default docs/eval). Needs root
 * for its network namespaces; run it sealed (the root script does). `--world` is what the harness itself
 * starts inside a scenario's namespace.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { REPO_ROOT } from "@roadnerd/registry";
import { EXIT } from "../cli/exit-codes.ts";
import { err, out } from "../cli/output.ts";
import type { OrchestratorConfig } from "../config.ts";
import { PROFILE_NAMES, type ProfileName } from "../planners/prompts.ts";
import { type PlannerName, type RunOptions, type RunResult, runScenario } from "./harness.ts";
import { renderMarkdown, renderSvg, summarize } from "./report.ts";
import { SCENARIOS } from "./scenarios.ts";

/** ROADNERD_EVAL_MODELS `3b=llama3.2:3b,13b=…,20b=…`: a model per profile (the rest use ROADNERD_OPENAI_MODEL). */
export function evalModels(config: OrchestratorConfig): Partial<Record<ProfileName, string>> {
  const models: Partial<Record<ProfileName, string>> = {};
  for (const pair of config.ROADNERD_EVAL_MODELS?.split(",") ?? []) {
    const [name, model] = pair.split("=");
    const profile = PROFILE_NAMES.find((p) => p === name);
    if (profile && model) models[profile] = model;
  }
  return models;
}

import { runWorldHost } from "./world-host.ts";

export interface EvalArgs {
  scenarios: readonly string[];
  out?: string | undefined;
  world?: string | undefined;
}

export async function evalCommand(args: EvalArgs, config: OrchestratorConfig): Promise<number> {
  if (args.world !== undefined) return runWorldHost(args.world);
  const url = config.ROADNERD_OPENAI_URL;
  const model = config.ROADNERD_OPENAI_MODEL;
  const planners: PlannerName[] = url && model ? ["rules", "scripted", "openai", "baseline"] : ["rules", "scripted"];
  const options: RunOptions = {
    planners,
    ...(url && model ? { openai: { url, model, profiles: PROFILE_NAMES, models: evalModels(config) } } : {}),
  };
  const results: RunResult[] = [];
  for (const scenario of SCENARIOS.filter((s) => args.scenarios.length === 0 || args.scenarios.includes(s.name))) {
    err(`${scenario.name} …`);
    for (const r of await runScenario(scenario, options)) {
      results.push(r);
      const verdict = r.correct ? "ok" : `WRONG (expected ${r.expected})`;
      const who = r.profile ? `${r.planner}·${r.profile}` : r.planner;
      err(`  ${who}: ${r.label} ${verdict} in ${r.steps} steps, ${r.time_to_label_ms} ms`);
    }
  }
  const dir = args.out ?? join(REPO_ROOT, "docs/eval");
  await mkdir(dir, { recursive: true });
  const meta = { date: new Date().toISOString().slice(0, 10), node: process.versions.node };
  const runs = { ...meta, summary: summarize(results), runs: results };
  await writeFile(join(dir, "results.json"), `${JSON.stringify(runs, null, 2)}\n`);
  const report = renderMarkdown(results, meta);
  await writeFile(join(dir, "README.md"), report);
  await writeFile(join(dir, "chart.svg"), renderSvg(results));
  // The tables and the targets on stdout too, as the report has them.
  out(report.slice(report.indexOf("## Per planner")));
  err(`wrote ${dir}/{results.json,README.md,chart.svg}`);
  // A model's wrong label is a measurement; the rules and scripted planners must get every world right.
  return results.every((r) => r.correct || r.profile !== undefined) ? EXIT.ok : EXIT.failed;
}
