/**
 * The MCP surface, loaded only when /mcp or --stdio is used: the SDK's low-level `Server` with our own
 * tools/list and tools/call handlers. The list serves the same cached JSON Schemas as GET /actions; calls
 * go through runTool (one validation path for every surface); failures are isError results that carry our
 * code, never the SDK's own text or a stack. Only the `tools` capability is declared: the tool list is fixed,
 * so there is no `listChanged` to promise.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type ListToolsResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import { compactSchemas } from "../define/compact-schemas.ts";
import { validRunId } from "../define/fields.ts";
import type { AnyTool } from "../define/tool.ts";
import { type DiagError, errorBody, toDiagError } from "../errors/errors.ts";
import { unknownTool } from "../errors/suggest.ts";
import { runTool } from "../runtime/run-tool.ts";
import type { Runtime } from "../runtime/runtime.ts";

type ListedTool = ListToolsResult["tools"][number];

/** The text copy of a result for clients that show only text: the same JSON, compact (summary included). */
export function resultText(result: Record<string, unknown>): string {
  return JSON.stringify(result);
}

export function errorResult(err: DiagError, runId?: string): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(errorBody(err, runId)) }], isError: true };
}

/**
 * The SDK builds an Ajv instance per Server unless given a validator, and it is used only to check a
 * client's answer to an elicitation, which these servers never ask for. One shared validator that
 * refuses keeps a stateless POST as cheap as a plain call.
 */
const noElicitation: jsonSchemaValidator = {
  getValidator: () => () => ({ valid: false, data: undefined, errorMessage: "these servers do not elicit input" }),
};

function listedTool(tool: AnyTool): ListedTool {
  return {
    name: tool.name,
    description: tool.summary,
    inputSchema: compactSchemas(tool).input as ListedTool["inputSchema"],
    outputSchema: compactSchemas(tool).output as ListedTool["outputSchema"],
    // destructiveHint and idempotentHint mean something only when readOnlyHint is false (MCP spec): left out.
    annotations: { readOnlyHint: true, openWorldHint: Boolean(tool.openWorld) },
  };
}

/** The tools/list answer, made once per runtime: every POST to /mcp serves the same object. */
const listCache = new WeakMap<Runtime<unknown>, ListToolsResult>();

/** tools/list: the same cached JSON Schemas as /actions, built once per runtime. */
export function listTools(runtime: Runtime<unknown>): ListToolsResult {
  let list = listCache.get(runtime);
  if (!list) {
    list = { tools: runtime.def.tools.map(listedTool) };
    listCache.set(runtime, list);
  }
  return list;
}

/** tools/call through runTool: a result with structuredContent and its text copy, or an isError result with our code. */
export async function callTool(
  runtime: Runtime<unknown>,
  params: { name: string; arguments?: Record<string, unknown> | undefined },
  signal: AbortSignal,
): Promise<CallToolResult> {
  const args = params.arguments;
  const tool = runtime.tool(params.name);
  if (!tool)
    return errorResult(
      unknownTool(
        params.name,
        runtime.def.tools.map((t) => t.name),
      ),
    );
  try {
    const result = await runTool(tool, args, runtime, { signal });
    return { content: [{ type: "text", text: resultText(result) }], structuredContent: result };
  } catch (err) {
    return errorResult(toDiagError(err), validRunId(args?.run_id));
  }
}

export function createMcpServer(runtime: Runtime<unknown>): Server {
  const def = runtime.def;
  const server = new Server(
    { name: `roadnerd-${def.name}`, version: def.version },
    { capabilities: { tools: {} }, instructions: def.instructions, jsonSchemaValidator: noElicitation },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => listTools(runtime));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => callTool(runtime, request.params, extra.signal));
  return server;
}
