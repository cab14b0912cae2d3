/**
 * The MCP surface, loaded only when /mcp or --stdio is used: the SDK's low-level `Server` with our own
 * tools/list and tools/call handlers over a tool source — one server's runtime, or a gateway's tools from many
 * servers. The list is built once per source (for a runtime, the same cached JSON Schemas as GET /actions);
 * calls go through the source's own call (runTool for a runtime: one validation path for every surface);
 * failures are isError results that carry our code, never the SDK's own text or a stack. A result's text
 * content is its model view (the verdict first, a few fields: what a small model reads) and its
 * structuredContent the full typed result, so nothing is sent twice. A caller that sends `_meta.progressToken`
 * gets the tool's progress reports as notifications/progress before the result (progress.ts). Only the `tools`
 * capability is declared: the tool list is fixed, so there is no `listChanged` to promise.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  EmptyResultSchema,
  ListToolsRequestSchema,
  type ListToolsResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import { compactSchemas } from "../define/compact-schemas.ts";
import { validRunId } from "../define/fields.ts";
import { type AnyTool, viewOfChecked } from "../define/tool.ts";
import { toDiagError } from "../errors/errors.ts";
import { unknownTool } from "../errors/suggest.ts";
import { runTool } from "../runtime/run-tool.ts";
import type { Runtime } from "../runtime/runtime.ts";
import { type ProgressParams, progressReporter, progressTokenOf } from "./progress.ts";

export type ListedTool = ListToolsResult["tools"][number];

export type CallParams = {
  name: string;
  arguments?: Record<string, unknown> | undefined;
  /** The caller's request metadata: a `progressToken` asks for notifications/progress. */
  _meta?: Record<string, unknown> | undefined;
};

/** How a call's progress notifications leave: the SDK's `extra.sendNotification`, or the HTTP answer's stream. */
export type SendProgress = (params: ProgressParams) => void;

/** A coded failure: the kernel's DiagError, or a code passed through from a server behind a gateway. */
export interface CodedError {
  code: string;
  message: string;
  hint?: string | undefined;
}

/** One tool as an MCP surface serves it: how it is listed, and how a call runs (a result, or a throw). */
export interface McpTool {
  readonly listed: ListedTool;
  call(
    args: Record<string, unknown> | undefined,
    signal: AbortSignal,
    onProgress?: (progress: Record<string, unknown>) => void,
    /** Whose call it is (http/caller-key.ts): a server's fair share of its slots, a gateway's relayed caller. */
    caller?: string,
  ): Promise<Record<string, unknown>>;
  /** The least time between two progress notifications (default PROGRESS_EVERY_MS; 0: every report). */
  readonly progressEveryMs?: number;
  /** The result's model view: the text content beside structuredContent. */
  view(result: Record<string, unknown>): string;
}

/** What an MCP surface serves: its identity and its tools. */
export interface McpToolSource {
  readonly name: string;
  readonly version: string;
  readonly instructions?: string | undefined;
  /** Every tool, in the order tools/list shows them. */
  readonly tools: readonly McpTool[];
  /** The tool a client's name means (default: the tool listed under that name). */
  find?(name: string): McpTool | undefined;
  /** Refuse a call before anything runs (a bound reached): throws a DiagError (E_BUSY, with retryAfterS). */
  admit?(caller?: string): void;
  /** The code and message of a failed call (default: toDiagError, so anything unexpected is E_INTERNAL). */
  errorOf?(err: unknown): CodedError;
}

/** A result: its model view as the text a model reads, the full typed result as structuredContent. */
export function toolResult(result: Record<string, unknown>, view: string): CallToolResult {
  return { content: [{ type: "text", text: view }], structuredContent: result };
}

export function errorResult(err: CodedError, runId?: string): CallToolResult {
  const error = err.hint
    ? { code: err.code, message: err.message, hint: err.hint }
    : { code: err.code, message: err.message };
  return {
    content: [{ type: "text", text: JSON.stringify(runId ? { error, run_id: runId } : { error }) }],
    isError: true,
  };
}

/**
 * The SDK builds an Ajv instance per Server unless given a validator, and it is used only to check a
 * client's answer to an elicitation, which these servers never ask for. One shared validator that
 * refuses keeps a stateless POST as cheap as a plain call.
 */
const noElicitation: jsonSchemaValidator = {
  getValidator: () => () => ({ valid: false, data: undefined, errorMessage: "these servers do not elicit input" }),
};

/** How long a result waits, at most, for the client's answer to the ping that follows its progress notifications. */
export const SETTLE_PING_MS = 1_000;
/**
 * The settle ping's own timeout in the SDK: never reached (setTimeout's largest delay), since the SDK answers a
 * timeout with notifications/cancelled, which a client that does not answer pings should not be sent. A ping
 * still out when the connection closes is dropped with it.
 */
const PING_NEVER_TIMES_OUT_MS = 2 ** 31 - 1;

/** True when `answer` settles within `ms`; the timer is cleared either way. */
function within(answer: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  // A ping that fails (the connection closed) has nothing left to wait for.
  return Promise.race([
    answer.then(
      () => true,
      () => true,
    ),
    late,
  ]).finally(() => clearTimeout(timer));
}

/** A tool's listing: its compact schemas and annotations, under its own name or the one a gateway gives it. */
export function listedTool(tool: AnyTool, name = tool.name): ListedTool {
  return {
    name,
    description: tool.summary,
    inputSchema: compactSchemas(tool).input as ListedTool["inputSchema"],
    outputSchema: compactSchemas(tool).output as ListedTool["outputSchema"],
    // destructiveHint and idempotentHint mean something only when readOnlyHint is false (MCP spec): left out.
    annotations: { readOnlyHint: true, openWorldHint: Boolean(tool.openWorld) },
  };
}

/** The tools/list answer, made once per source: every POST to /mcp serves the same object. */
const listCache = new WeakMap<McpToolSource, ListToolsResult>();

/** tools/list: the source's tools, built once. */
export function listTools(source: McpToolSource): ListToolsResult {
  let list = listCache.get(source);
  if (!list) {
    list = { tools: source.tools.map((t) => t.listed) };
    listCache.set(source, list);
  }
  return list;
}

/**
 * tools/call: a result with structuredContent and its model view, or an isError result with our code. With a
 * progressToken and a way to send, the tool's progress reports go out as notifications/progress, all of them
 * before the result (the reporter is finished before this returns).
 */
export async function callTool(
  source: McpToolSource,
  params: CallParams,
  signal: AbortSignal,
  sendProgress?: SendProgress,
  caller?: string,
): Promise<CallToolResult> {
  const args = params.arguments;
  const tool = source.find ? source.find(params.name) : source.tools.find((t) => t.listed.name === params.name);
  if (!tool)
    return errorResult(
      unknownTool(
        params.name,
        source.tools.map((t) => t.listed.name),
      ),
    );
  const token = progressTokenOf(params._meta);
  const reporter =
    token === undefined || !sendProgress ? undefined : progressReporter(token, sendProgress, tool.progressEveryMs);
  try {
    const result = await tool.call(args, signal, reporter?.report, caller);
    reporter?.finish();
    return toolResult(result, tool.view(result));
  } catch (err) {
    reporter?.finish();
    return errorResult((source.errorOf ?? toDiagError)(err), validRunId(args?.run_id));
  }
}

const runtimeSources = new WeakMap<Runtime<unknown>, McpToolSource>();

/** One server's runtime as a tool source, made once per runtime; a tool is found by its name or catalog id. */
export function runtimeSource(runtime: Runtime<unknown>): McpToolSource {
  let source = runtimeSources.get(runtime);
  if (!source) {
    const def = runtime.def;
    const byTool = new Map<AnyTool, McpTool>(
      def.tools.map((t) => [
        t,
        {
          listed: listedTool(t),
          // A caller that asked for progress gets its own execution (runTool): a shared one reports to no one.
          call: (args, signal, onProgress, caller) => runTool(t, args, runtime, { signal, onProgress, caller }),
          // The result comes from runTool, checked against the tool's output schema already.
          view: (result) => viewOfChecked(t, result),
        },
      ]),
    );
    source = {
      name: `roadnerd-${def.name}`,
      version: def.version,
      instructions: def.instructions,
      tools: [...byTool.values()],
      find: (name) => {
        const tool = runtime.tool(name);
        return tool && byTool.get(tool);
      },
      admit: (caller) => runtime.calls.check("/mcp", caller),
    };
    runtimeSources.set(runtime, source);
  }
  return source;
}

export function createSourceServer(source: McpToolSource): Server {
  const server = new Server(
    { name: source.name, version: source.version },
    { capabilities: { tools: {} }, instructions: source.instructions, jsonSchemaValidator: noElicitation },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => listTools(source));
  // The client left a settle ping unanswered past SETTLE_PING_MS: it does not answer pings (or not now), so no
  // result waits on another until one is answered.
  let silent = false;
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    let notified = false;
    const result = await callTool(source, request.params, extra.signal, (params) => {
      notified = true;
      void extra.sendNotification({ method: "notifications/progress", params }).catch(() => {});
    });
    // The SDK's client handles a notification a microtask late but a response at once: read in one chunk
    // (stdio, a busy client), the last progress would find its handler gone. A ping answered means the client
    // has handled everything sent before it; bounded, for a client that stopped reading or ignores pings,
    // and never cancelled.
    if (notified && !silent) {
      const answered = extra
        .sendRequest({ method: "ping" }, EmptyResultSchema, { timeout: PING_NEVER_TIMES_OUT_MS })
        .then(() => {
          silent = false;
        });
      answered.catch(() => {});
      if (!(await within(answered, SETTLE_PING_MS))) silent = true;
    }
    return result;
  });
  return server;
}

export function createMcpServer(runtime: Runtime<unknown>): Server {
  return createSourceServer(runtimeSource(runtime));
}
