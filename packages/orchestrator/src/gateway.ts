/**
 * The MCP gateway: every tool of every server (as `<server>__<tool>`, a name MCP clients accept) plus
 * `triage`, as one tool source for the kernel's MCP adapter, which serves it over stdio and Streamable HTTP
 * exactly as it serves one server. Servers are attached lazily on their first call through the shared Attacher.
 */

import { runIdField } from "@roadnerd/conventions";
import {
  inputJsonSchema,
  listedTool,
  type McpTool,
  type McpToolSource,
  modelView,
  outputJsonSchema,
  parseInput,
} from "@roadnerd/conventions/internal";
import { z } from "zod";
import pkg from "../package.json" with { type: "json" };
import type { Attacher } from "./attach.ts";
import type { Catalog, CatalogEntry } from "./catalog.ts";
import { stepLine } from "./cli/output.ts";
import { errorInfo } from "./errors.ts";
import { hostsTool, splitHost, withHostArg } from "./gateway-hosts.ts";
import { LABELS } from "./labels.ts";
import { resolveToolName } from "./parse-reply.ts";
import type { Planner } from "./planners/planner.ts";
import { streamQuery } from "./relay-progress.ts";
import { runTriage } from "./triage.ts";
import type { StepLine } from "./triage-log.ts";
import { triageToolResultSchema } from "./triage-report.ts";

export const TRIAGE_TOOL = "triage";

/** `network/dns_resolve` → `network__dns_resolve` (MCP tool names have no `/`). */
export const mcpName = (id: string) => id.replace("/", "__");

export interface GatewayOptions {
  catalog: Catalog;
  attacher: Attacher;
  /** The planner the triage tool uses (a fresh one per call). */
  planner: () => Planner;
  logDir?: string;
  /** `up`: each server's state (up, restarting…), shown by the HTTP gateway's /healthz. */
  status?: () => Record<string, unknown>;
  /** Bearer token every route but /healthz requires (ROADNERD_GATEWAY_TOKEN); the page also takes ?token=. */
  token?: string;
}

const triageInput = z.strictObject({
  symptom: z.string().max(300).optional().describe("what the user sees, e.g. 'port 8080 already in use'"),
  run_id: runIdField.describe("your id for this run: on every log line and passed to every tool call"),
});
/** What the kernel's input check needs: the same messages and hint as every server's tools give. */
const triageSpec = { name: TRIAGE_TOOL, example: { symptom: "no internet" }, inputSchema: triageInput };

function triageTool(options: GatewayOptions): McpTool {
  const hosts = options.attacher.hostNames();
  const listed: McpTool["listed"] = {
    name: TRIAGE_TOOL,
    title: "triage",
    description: `Find why the network (or a port, disk, service) misbehaves in ≤3 read-only tool calls: a label (${LABELS.join(", ")}), a reason, the evidence and a one-line category_hint for brainstorming.`,
    inputSchema: { ...inputJsonSchema(triageInput), type: "object" },
    outputSchema: { ...outputJsonSchema(triageToolResultSchema), type: "object" },
    annotations: { readOnlyHint: true, openWorldHint: true },
  };
  return {
    listed: withHostArg(listed, hosts),
    // Every step is news (at most budget + 1 of them): none is held back by the rate of notifications.
    progressEveryMs: 0,
    call: async (args, signal, onProgress, caller) => {
      const { host, args: own } = splitHost(args, hosts);
      const { symptom, run_id } = triageInput.parse(parseInput(triageSpec, own));
      const outcome = await runTriage({
        planner: options.planner(),
        catalog: options.catalog,
        attacher: options.attacher,
        symptom: symptom ?? "",
        signal,
        ...(host ? { host } : {}),
        ...(caller ? { caller } : {}),
        // A caller that passed a progressToken gets one notifications/progress per step, as the CLI prints them.
        ...(onProgress
          ? { onStep: (line: StepLine) => onProgress({ progress: line.step, message: stepLine(line) }) }
          : {}),
        ...(run_id ? { runId: run_id } : {}),
        ...(options.logDir ? { logDir: options.logDir } : {}),
      });
      return triageToolResultSchema.parse(outcome);
    },
    view: triageView,
  };
}

/** The triage answer as a model reads it: the label and reason first, then one line per call. */
function triageView(result: Record<string, unknown>): string {
  const parsed = triageToolResultSchema.safeParse(result);
  if (!parsed.success) return JSON.stringify(result);
  const { label, reason, evidence } = parsed.data;
  const calls = evidence.map((e) => `${e.tool}: ${e.ok ? (e.summary ?? "ok") : (e.error?.code ?? "failed")}`);
  return [`${label}: ${reason}`, ...calls].join("\n");
}

/**
 * A server's tool, attached on its first call; its input is checked here first, so a bad call spawns nothing.
 * With a fleet, `host` says whose server answers (default this machine's). A caller that asked for progress
 * (`onProgress`, a progressToken) is served over the tool's stream, its progress relayed (relay-progress.ts);
 * every other call goes over POST /actions.
 */
function serverTool(entry: CatalogEntry, attacher: Attacher): McpTool {
  const hosts = attacher.hostNames();
  return {
    listed: withHostArg({ ...listedTool(entry.definition, mcpName(entry.id)), title: entry.id }, hosts),
    call: async (args, signal, onProgress, caller) => {
      const { host, args: own } = splitHost(args, hosts);
      parseInput(entry.definition, own);
      const query = onProgress ? streamQuery(entry.definition.inputSchema, own) : undefined;
      const relay = onProgress && query ? { query, onProgress } : undefined;
      const options = { signal, ...(host ? { host } : {}), ...(relay ? { relay } : {}), ...(caller ? { caller } : {}) };
      return (await attacher.call(entry.server, entry.tool, own, options)).result;
    },
    view: (result) => modelView(entry.definition, result),
  };
}

export function gatewaySource(options: GatewayOptions): McpToolSource {
  const fleet = options.attacher.hostNames().length ? [hostsTool(options.attacher)] : [];
  const tools = [triageTool(options), ...fleet, ...options.catalog.entries.map((e) => serverTool(e, options.attacher))];
  const byName = new Map(tools.map((t) => [t.listed.name, t]));
  return {
    name: "roadnerd",
    version: pkg.version,
    instructions:
      "Read-only laptop diagnostics. Call `triage` with the user's symptom first, or one tool at a time (e.g. network__route_info).",
    tools,
    // The near misses the CLI resolves (network/tcp_port_check, network.route_info, a bare route_info) resolve
    // here too, when they mean exactly one tool; anything else gets the closest names from the adapter.
    find: (name) => {
      const exact = byName.get(name);
      if (exact) return exact;
      const resolved = resolveToolName(name, options.catalog);
      return "entry" in resolved ? byName.get(mcpName(resolved.entry.id)) : undefined;
    },
    // The servers' own codes (and E_ATTACH) pass through, as the CLI shows them.
    errorOf: errorInfo,
  };
}
