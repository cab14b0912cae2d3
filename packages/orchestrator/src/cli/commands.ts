/** The one-shot commands over one Orchestrator: list, call, triage. Each returns its exit code (exit-codes.ts). */
import { streamLine } from "../catalog.ts";
import { errorInfo } from "../errors.ts";
import type { Orchestrator } from "../orchestrator.ts";
import { checkCall } from "../parse-reply.ts";
import { runTriage } from "../triage.ts";
import type { StepLine } from "../triage-log.ts";
import { triageReportSchema } from "../triage-report.ts";
import { EXIT, exitCodeFor } from "./exit-codes.ts";
import { outboundHint } from "./outbound-hint.ts";
import { err, errorJson, oneLine, out, status, stepLine } from "./output.ts";
import { makePlanner, type PlannerName } from "./planner.ts";
import { notesOf, renderResult } from "./render.ts";
import { timeoutHint } from "./timeout-hint.ts";
import { triageText } from "./triage-text.ts";

export function listCommand(o: Orchestrator, json: boolean): number {
  const streams = o.catalog.streams;
  if (json) {
    const tools = o.catalog.entries.map((e) => ({ tool: e.id, summary: e.summary, params: e.params }));
    const watch = streams.map((e) => ({ stream: e.id, summary: e.summary, params: e.params, port: e.port }));
    out(JSON.stringify([...tools, ...watch]));
    return EXIT.ok;
  }
  out(o.catalog.text());
  // Streams are not tools a model calls (not in the catalog's text): a person reads them off the server's port.
  if (streams.length > 0) {
    out("\nstreams (server-sent events while `roadnerd up` runs, params as ?key=value):");
    out(streams.map(streamLine).join("\n"));
  }
  for (const u of o.catalog.unavailable) err(`(${u.server} not loaded: ${u.reason})`);
  return EXIT.ok;
}

/** One tool call: the name and params checked as a planner's call is (near misses resolved), then called. */
export async function callCommand(
  o: Orchestrator,
  name: string,
  pairs: ReadonlyArray<[string, unknown]>,
  json: boolean,
  host?: string,
): Promise<number> {
  const parsed = checkCall(name, Object.fromEntries(pairs), o.catalog);
  if (parsed.kind === "invalid") {
    const hint = parsed.suggestions ? `closest: ${parsed.suggestions.join(", ")}` : undefined;
    const error = { code: parsed.code, message: parsed.message, ...(hint ? { hint } : {}) };
    if (json) out(errorJson(error));
    else err(oneLine(error));
    return exitCodeFor(parsed.code);
  }
  if (parsed.resolvedFrom) err(`(${parsed.resolvedFrom} → ${parsed.call.id})`);
  try {
    const { result } = await o.attacher.call(parsed.call.server, parsed.call.tool, parsed.call.params, {
      ...(host ? { host } : {}),
    });
    if (json) out(JSON.stringify(result));
    else out(renderResult(result, parsed.call.id, notesOf(o.catalog.get(parsed.call.id)?.definition.output)));
    return EXIT.ok;
  } catch (e) {
    const server = parsed.call.server;
    const found = host ? errorInfo(e) : outboundHint(errorInfo(e), server, o.attacher.isRemote(server));
    const error = timeoutHint(found, parsed.call.params);
    if (json) out(errorJson(error));
    else err(oneLine(error));
    return exitCodeFor(error.code);
  }
}

export interface TriageArgs {
  planner: PlannerName;
  symptom: string;
  script?: string | undefined;
  budget?: number | undefined;
  timeoutMs?: number | undefined;
  runId?: string | undefined;
  logDir?: string | undefined;
  /** Another machine of ROADNERD_HOSTS (checked by the caller). */
  host?: string | undefined;
  json: boolean;
}

export async function triageCommand(o: Orchestrator, args: TriageArgs): Promise<number> {
  const planner = makePlanner(o.config, args.planner, args.script);
  const where = args.host ? ` on ${args.host}` : "";
  err(`triage with ${planner.name}${where}: ${args.symptom || "(no symptom: network checks)"}`);
  const steps: StepLine[] = [];
  const outcome = await runTriage({
    planner,
    catalog: o.catalog,
    attacher: o.attacher,
    symptom: args.symptom,
    ...(args.budget !== undefined ? { budget: args.budget } : {}),
    ...(args.timeoutMs !== undefined ? { timeoutMs: args.timeoutMs } : {}),
    ...(args.runId !== undefined ? { runId: args.runId } : {}),
    ...(args.logDir !== undefined ? { logDir: args.logDir } : {}),
    ...(args.host !== undefined ? { host: args.host } : {}),
    // --json: each step as a line on stderr for whoever watches. A person: a live status on a terminal only,
    // since the text after the run lists every step once, with the verdict.
    onStep: (s) => {
      steps.push(s);
      if (args.json) err(stepLine(s));
      else if (s.requested_tool !== null) status(`${stepLine(s)} …`);
    },
  });
  if (args.json) out(JSON.stringify(triageReportSchema.parse(outcome)));
  else out(triageText(outcome, steps));
  if (outcome.log_error) err(`(log not written: ${outcome.log_error})`);
  return EXIT.ok;
}
