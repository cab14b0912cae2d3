/**
 * /actions: the catalog, one tool's schemas, and the call itself (its full typed JSON; with `?view=model`, the
 * result's model view as text/plain instead). Mutating methods are refused.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { compactSchemas } from "../../define/compact-schemas.ts";
import { inputJsonSchema, outputJsonSchema } from "../../define/schemas.ts";
import { type AnyTool, modelView } from "../../define/tool.ts";
import { DiagError } from "../../errors/errors.ts";
import { unknownTool } from "../../errors/suggest.ts";
import { runTool } from "../../runtime/run-tool.ts";
import type { Runtime } from "../../runtime/runtime.ts";
import { callerGone } from "../caller-gone.ts";
import { callerKey } from "../caller-key.ts";
import { unlessAnswered } from "../in-flight.ts";

type ToolParams = { tool: string; server?: string };

export function registerActions(app: FastifyInstance, runtime: Runtime<unknown>): void {
  const { name: prefix, tools } = runtime.def;
  /** A tool by its name, or by its catalog id `<server>/<tool>` (what GET /actions lists). */
  const find = (params: ToolParams): AnyTool => {
    const name = params.server === undefined ? params.tool : `${params.server}/${params.tool}`;
    const tool = runtime.tool(name);
    if (!tool)
      throw unknownTool(
        name,
        tools.map((t) => t.name),
      );
    return tool;
  };

  app.get("/actions", async () =>
    tools.map((t) => ({
      tool: `${prefix}/${t.name}`,
      summary: t.summary,
      call: `POST /actions/${t.name}`,
      input: compactSchemas(t).input,
    })),
  );

  const describe = async (request: { params: ToolParams }) => {
    const tool = find(request.params);
    return {
      tool: `${prefix}/${tool.name}`,
      summary: tool.summary,
      call: `POST /actions/${tool.name}`,
      example: tool.example,
      input: inputJsonSchema(tool.inputSchema),
      output: outputJsonSchema(tool.outputSchema),
    };
  };
  app.get<{ Params: ToolParams }>("/actions/:tool", describe);
  app.get<{ Params: ToolParams }>("/actions/:server/:tool", describe);

  type CallRoute = { Params: ToolParams; Querystring: { view?: string } };
  const call = async (request: FastifyRequest<CallRoute>, reply: FastifyReply) => {
    const tool = find(request.params);
    const view = request.query.view;
    if (view !== undefined && view !== "model") {
      throw new DiagError(
        "E_INVALID_INPUT",
        `view must be "model" (or left out for the full JSON), got ${JSON.stringify(view).slice(0, 40)}`,
      );
    }
    const signal = callerGone(reply);
    const caller = await callerKey(request.raw.socket, request.headers);
    const result = await unlessAnswered(reply, runTool(tool, request.body, runtime, { signal, caller }));
    // Answered at shutdown already: nothing more to send.
    if (result === undefined) return undefined;
    if (view === undefined) return result;
    return reply.type("text/plain; charset=utf-8").send(modelView(tool, result));
  };
  app.post<CallRoute>("/actions/:tool", call);
  app.post<CallRoute>("/actions/:server/:tool", call);

  app.route({
    method: ["PUT", "PATCH", "DELETE"],
    url: "/actions/:tool",
    handler: async () => {
      throw new DiagError("E_UNSUPPORTED", "servers are read-only: call tools with POST /actions/<tool>");
    },
  });
}
