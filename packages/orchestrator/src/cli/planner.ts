/** The planner a command asked for (--planner, else ROADNERD_PLANNER), built from the orchestrator's config. */
import { readFileSync } from "node:fs";
import { z } from "zod";
import type { OrchestratorConfig } from "../config.ts";
import { fieldOf, UsageError } from "../errors.ts";
import { OpenAiPlanner } from "../planners/openai.ts";
import type { Planner } from "../planners/planner.ts";
import { RulesPlanner } from "../planners/rules.ts";
import { ScriptedPlanner } from "../planners/scripted.ts";

export type PlannerName = OrchestratorConfig["ROADNERD_PLANNER"];

/**
 * A script is a JSON list of replies, each as the model would send it: a string (verbatim, mistakes and all)
 * or an object (sent as its JSON).
 */
const scriptFile = z.array(z.union([z.string(), z.record(z.string(), z.unknown())]));

/** A reply list that parses, for the messages below: objects, so the example is valid JSON as written. */
export const SCRIPT_EXAMPLE = '[{"tool":"network/route_info","params":{}}, {"label":"ok","reason":"fine"}]';

function readScript(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = fieldOf(err, "code");
    throw new UsageError(`--script ${path}: ${code === "ENOENT" ? "no such file" : `not readable (${String(code)})`}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // Not the parser's message: it quotes the file's first bytes, whatever file was named.
    throw new UsageError(`--script ${path}: not JSON; expected a list of replies, e.g. ${SCRIPT_EXAMPLE}`);
  }
  const parsed = scriptFile.safeParse(raw);
  if (!parsed.success) {
    throw new UsageError(
      `--script ${path}: expected a JSON list of replies (strings sent verbatim, or objects), e.g. ${SCRIPT_EXAMPLE}`,
    );
  }
  // The model's text as it would arrive: an object is sent as its JSON.
  return parsed.data.map((r) => (typeof r === "string" ? r : JSON.stringify(r)));
}

export function makePlanner(config: OrchestratorConfig, planner: PlannerName, script?: string): Planner {
  switch (planner) {
    case "rules":
      return new RulesPlanner({ probeHost: config.ROADNERD_PROBE_HOST });
    case "scripted":
      if (!script) throw new UsageError("--planner scripted needs --script <file with a JSON list of replies>");
      return new ScriptedPlanner(readScript(script));
    case "openai": {
      const url = config.ROADNERD_OPENAI_URL;
      const model = config.ROADNERD_OPENAI_MODEL;
      if (!url || !model) throw new UsageError("--planner openai needs ROADNERD_OPENAI_URL and ROADNERD_OPENAI_MODEL");
      return new OpenAiPlanner({
        url,
        model,
        profile: config.ROADNERD_MODEL_PROFILE,
        ...(config.ROADNERD_OPENAI_KEY ? { apiKey: config.ROADNERD_OPENAI_KEY } : {}),
      });
    }
  }
}
