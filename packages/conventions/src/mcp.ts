/**
 * The MCP surface, loaded only when /mcp or --stdio is used. Tools are registered on an McpServer, then
 * tools/list and tools/call are routed to our handlers: the same JSON Schemas as /actions, one validation
 * path (runTool) for both surfaces, and failures as isError results that carry our code, never the SDK's
 * own text or a stack.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type ListToolsResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { FastifyReply, FastifyRequest } from "fastify";
import { DiagError, errorBody, toDiagError } from "./errors.ts";
import { type BaseContext, runTool } from "./run-tool.ts";
import { inputJsonSchema, outputJsonSchema } from "./schemas.ts";
import { unknownTool } from "./suggest.ts";
import type { AnyTool } from "./tool.ts";

export interface McpIdentity {
  name: string;
  version: string;
  instructions?: string | undefined;
}

/** The text copy of a result for clients that show only text: the same JSON, compact (summary included). */
export function resultText(result: Record<string, unknown>): string {
  return JSON.stringify(result);
}

export function errorResult(err: DiagError, runId?: string): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(errorBody(err, runId)) }], isError: true };
}

export function createMcpServer(identity: McpIdentity, tools: readonly AnyTool[], base: BaseContext): McpServer {
  const server = new McpServer(
    { name: identity.name, version: identity.version },
    { capabilities: { tools: {} }, instructions: identity.instructions },
  );
  const byName = new Map(tools.map((t) => [t.name, t]));
  const annotations = (tool: AnyTool) => ({
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: Boolean(tool.openWorld),
  });
  for (const tool of tools) {
    server.registerTool(
      tool.name,
      {
        description: tool.summary,
        inputSchema: tool.inputSchema,
        outputSchema: tool.outputSchema,
        annotations: annotations(tool),
      },
      // Never reached: tools/call is routed to our handler below.
      async () => errorResult(new DiagError("E_INTERNAL", "unrouted call")),
    );
  }
  // tools/list serves the same cached JSON Schemas as GET /actions and /openapi.json (one conversion, one text).
  server.server.setRequestHandler(
    ListToolsRequestSchema,
    async (): Promise<ListToolsResult> => ({
      tools: tools.map((tool) => ({
        name: tool.name,
        description: tool.summary,
        inputSchema: inputJsonSchema(tool.inputSchema) as ListToolsResult["tools"][number]["inputSchema"],
        outputSchema: outputJsonSchema(tool.outputSchema) as ListToolsResult["tools"][number]["outputSchema"],
        annotations: annotations(tool),
      })),
    }),
  );
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const name = request.params.name;
    const tool = byName.get(name);
    if (!tool) {
      return errorResult(unknownTool(name, [...byName.keys()]));
    }
    const args = request.params.arguments;
    try {
      const result = await runTool(tool, args, base, { signal: extra.signal });
      return { content: [{ type: "text", text: resultText(result) }], structuredContent: result };
    } catch (err) {
      const runId = typeof args?.run_id === "string" ? args.run_id : undefined;
      return errorResult(toDiagError(err), runId);
    }
  });
  return server;
}

/** Stateless Streamable HTTP: a new server and transport per POST (the SDK forbids reusing either). */
export async function handleMcpPost(
  request: FastifyRequest,
  reply: FastifyReply,
  identity: McpIdentity,
  tools: readonly AnyTool[],
  base: BaseContext,
): Promise<void> {
  const server = createMcpServer(identity, tools, base);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  reply.hijack();
  reply.raw.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(request.raw, reply.raw, request.body);
}

export async function serveStdio(identity: McpIdentity, tools: readonly AnyTool[], base: BaseContext): Promise<void> {
  const server = createMcpServer(identity, tools, base);
  await server.connect(new StdioServerTransport());
}
