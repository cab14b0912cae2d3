/** The CLI's commands over one Orchestrator. Each returns the process exit code. */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { entryLine } from "../catalog.ts";
import { errorInfo } from "../errors.ts";
import type { Orchestrator } from "../orchestrator.ts";
import { parseReply } from "../parse-reply.ts";
import { OpenAiPlanner } from "../planners/openai.ts";
import type { Planner } from "../planners/planner.ts";
import { RulesPlanner } from "../planners/rules.ts";
import { ScriptedPlanner } from "../planners/scripted.ts";
import { runTriage } from "../triage.ts";
import { err, out, stepLine } from "./output.ts";
import { parseKeyValues } from "./params.ts";

export function listCommand(o: Orchestrator, json: boolean): number {
  if (json) {
    out(JSON.stringify(o.catalog.entries.map((e) => ({ tool: e.id, summary: e.summary, params: e.params }))));
    return 0;
  }
  out(o.catalog.text());
  for (const u of o.catalog.unavailable) err(`(${u.server} not loaded: ${u.reason})`);
  return 0;
}

export async function callCommand(o: Orchestrator, args: string[], json: boolean): Promise<number> {
  const [name, ...rest] = args;
  if (!name) {
    err("usage: roadnerd call <server>/<tool> [key=value …]");
    return 2;
  }
  let params: Record<string, unknown>;
  try {
    params = parseKeyValues(rest);
  } catch (e) {
    err((e as Error).message);
    return 2;
  }
  const parsed = parseReply(JSON.stringify({ tool: name, params }), o.catalog);
  if (parsed.kind !== "call") {
    const msg = parsed.kind === "invalid" ? parsed.message : "not a tool call";
    const hint = parsed.kind === "invalid" && parsed.suggestions ? ` (closest: ${parsed.suggestions.join(", ")})` : "";
    err(`${parsed.kind === "invalid" ? parsed.code : "E_BAD_SHAPE"}: ${msg}${hint}`);
    return 2;
  }
  if (parsed.resolvedFrom) err(`(${parsed.resolvedFrom} → ${parsed.call.id})`);
  try {
    const r = await o.attacher.call(parsed.call.server, parsed.call.tool, parsed.call.params);
    if (json) out(JSON.stringify(r.result));
    else {
      out(String(r.result.summary ?? parsed.call.id));
      const { summary: _summary, ...rest } = r.result;
      out(JSON.stringify(rest, null, 2));
    }
    return 0;
  } catch (e) {
    const error = errorInfo(e);
    if (json) out(JSON.stringify({ error }));
    else err(`${error.code}: ${error.message}${error.hint ? `\n  hint: ${error.hint}` : ""}`);
    return 1;
  }
}

/**
 * A script is a JSON list of replies, each as the model would send it: a string (verbatim, mistakes and all)
 * or an object (sent as its JSON).
 */
const scriptFile = z.array(z.union([z.string(), z.record(z.string(), z.unknown())]));

function readScript(path: string): string[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    // Not the parser's message: it quotes the file's first bytes, whatever file was named.
    throw new Error(`--script ${path}: not a readable JSON file`);
  }
  const parsed = scriptFile.safeParse(raw);
  if (!parsed.success) {
    throw new Error(
      `--script ${path}: expected a JSON list of replies (strings sent verbatim, or objects), e.g. ` +
        `["{"tool":"network/route_info","params":{}}", {"label":"ok","reason":"fine"}]`,
    );
  }
  return parsed.data.map((r) => (typeof r === "string" ? r : JSON.stringify(r)));
}

export interface TriageArgs {
  planner: string;
  symptom: string;
  script?: string;
  budget?: number;
  timeoutMs?: number;
  json: boolean;
}

export function makePlanner(o: Orchestrator, args: Pick<TriageArgs, "planner" | "script">): Planner {
  switch (args.planner) {
    case "rules":
      return new RulesPlanner({ probeHost: o.config.ROADNERD_PROBE_HOST });
    case "scripted": {
      if (!args.script) throw new Error("--planner scripted needs --script <file with a JSON list of replies>");
      return new ScriptedPlanner(readScript(args.script));
    }
    case "openai": {
      const url = o.config.ROADNERD_OPENAI_URL;
      const model = o.config.ROADNERD_OPENAI_MODEL;
      if (!url || !model) throw new Error("--planner openai needs ROADNERD_OPENAI_URL and ROADNERD_OPENAI_MODEL");
      return new OpenAiPlanner({
        url,
        model,
        profile: o.config.ROADNERD_MODEL_PROFILE,
        ...(o.config.ROADNERD_OPENAI_KEY ? { apiKey: o.config.ROADNERD_OPENAI_KEY } : {}),
      });
    }
    default:
      throw new Error(`unknown planner ${args.planner}: rules, openai or scripted`);
  }
}

export async function triageCommand(o: Orchestrator, args: TriageArgs): Promise<number> {
  let planner: Planner;
  try {
    planner = makePlanner(o, args);
  } catch (e) {
    err((e as Error).message);
    return 2;
  }
  err(`triage with ${planner.name}: ${args.symptom || "(no symptom: network checks)"}`);
  const outcome = await runTriage({
    planner,
    catalog: o.catalog,
    attacher: o.attacher,
    symptom: args.symptom,
    ...(args.budget !== undefined ? { budget: args.budget } : {}),
    ...(args.timeoutMs ? { timeoutMs: args.timeoutMs } : {}),
    ...(o.config.ROADNERD_LOG_DIR ? { logDir: o.config.ROADNERD_LOG_DIR } : {}),
    onStep: (s) => err(stepLine(s)),
  });
  if (args.json) {
    const { label, reason, steps, evidence, run_id, metrics } = outcome;
    out(JSON.stringify({ label, reason, steps, evidence, run_id, metrics }));
  } else {
    out(`${outcome.label}: ${outcome.reason}`);
    for (const e of outcome.evidence) out(`  ${e.tool}: ${e.ok ? e.summary : `${e.error?.code} ${e.error?.message}`}`);
    if (outcome.log_path) out(`  log: ${outcome.log_path}`);
  }
  return 0;
}

export { entryLine };
