/**
 * The MCP gateway: one MCP server listing every tool of every server (as `<server>__<tool>`, a name MCP
 * clients accept) plus `triage`. Servers are attached lazily on their first call through the shared
 * Attacher. The SDK's low-level Server with our own list/call handlers, as the kernel does per server.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type ListToolsResult,
} from "@modelcontextprotocol/sdk/types.js";
import { inputJsonSchema } from "@roadnerd/conventions/internal";
import pkg from "../package.json" with { type: "json" };
import type { Attacher } from "./attach.ts";
import type { Catalog, CatalogEntry } from "./catalog.ts";
import { errorInfo } from "./errors.ts";
import { LABELS } from "./labels.ts";
import type { Planner } from "./planners/planner.ts";
import { runTriage } from "./triage.ts";

export const TRIAGE_TOOL = "triage";

/** `network/dns_resolve` → `network__dns_resolve` (MCP tool names have no `/`). */
export const mcpName = (id: string) => id.replace("/", "__");

export interface GatewayOptions {
  catalog: Catalog;
  attacher: Attacher;
  /** The planner the triage tool uses (a fresh one per call). */
  planner: () => Planner;
  logDir?: string;
}

type ListedTool = ListToolsResult["tools"][number];

function listed(e: CatalogEntry): ListedTool {
  return {
    name: mcpName(e.id),
    title: e.id,
    description: e.summary,
    inputSchema: inputJsonSchema(e.definition.inputSchema) as ListedTool["inputSchema"],
    annotations: { readOnlyHint: true, openWorldHint: Boolean(e.definition.openWorld) },
  };
}

const triageTool: ListedTool = {
  name: TRIAGE_TOOL,
  title: "triage",
  description: `Find why the network (or a port, disk, service) misbehaves in ≤3 read-only tool calls: a label (${LABELS.join(", ")}), a reason and the evidence.`,
  inputSchema: {
    type: "object",
    properties: {
      symptom: { type: "string", maxLength: 300, description: "what the user sees, e.g. 'port 8080 already in use'" },
    },
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true, openWorldHint: true },
};

const errorResult = (code: string, message: string): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify({ error: { code, message } }) }],
  isError: true,
});

const okResult = (result: Record<string, unknown>): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(result) }],
  structuredContent: result,
});

export function createGatewayServer(options: GatewayOptions): Server {
  const server = new Server(
    { name: "roadnerd", version: pkg.version },
    {
      capabilities: { tools: {} },
      instructions:
        "Read-only laptop diagnostics. Call `triage` with the user's symptom first, or one tool at a time (e.g. network__route_info).",
    },
  );
  const byName = new Map(options.catalog.entries.map((e) => [mcpName(e.id), e]));
  const tools = [triageTool, ...options.catalog.entries.map(listed)];
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const args = (req.params.arguments ?? {}) as Record<string, unknown>;
    if (req.params.name === TRIAGE_TOOL) {
      const symptom = typeof args.symptom === "string" ? args.symptom.slice(0, 300) : "";
      const outcome = await runTriage({
        planner: options.planner(),
        catalog: options.catalog,
        attacher: options.attacher,
        symptom,
        signal: extra.signal,
        ...(options.logDir ? { logDir: options.logDir } : {}),
      });
      const { label, reason, steps, evidence, run_id } = outcome;
      return okResult({ label, reason, steps, evidence, run_id });
    }
    const entry = byName.get(req.params.name);
    if (!entry) return errorResult("E_UNKNOWN_TOOL", `no tool named ${req.params.name.slice(0, 64)}`);
    const checked = entry.definition.inputSchema.safeParse(args);
    if (!checked.success) {
      const issues = checked.error.issues.map(
        (i: { path: PropertyKey[]; message: string }) => `${i.path.join(".")}: ${i.message}`,
      );
      return errorResult("E_INVALID_INPUT", `${entry.id}: ${issues.slice(0, 3).join("; ")}`);
    }
    try {
      const r = await options.attacher.call(entry.server, entry.tool, args, { signal: extra.signal });
      return okResult(r.result);
    } catch (err) {
      const { code, message } = errorInfo(err);
      return errorResult(code, message);
    }
  });
  return server;
}
