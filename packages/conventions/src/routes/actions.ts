/** /actions: the catalog, one tool's schemas, and the call itself. Mutating methods are refused. */
import type { FastifyInstance } from "fastify";
import { compactSchemas } from "../compact-schemas.ts";
import { DiagError } from "../errors.ts";
import { runTool } from "../run-tool.ts";
import type { Runtime } from "../runtime.ts";
import { inputJsonSchema, outputJsonSchema } from "../schemas.ts";
import { unknownTool } from "../suggest.ts";
import type { AnyTool } from "../tool.ts";

export function registerActions(app: FastifyInstance, runtime: Runtime<unknown>): void {
  const { name: prefix, tools } = runtime.def;
  const find = (name: string): AnyTool => {
    const tool = runtime.tool(name);
    if (!tool)
      throw unknownTool(
        name,
        tools.map((t) => t.name),
      );
    return tool;
  };

  app.get("/actions", async () =>
    tools.map((t) => ({ tool: `${prefix}/${t.name}`, summary: t.summary, input: compactSchemas(t).input })),
  );

  app.get<{ Params: { tool: string } }>("/actions/:tool", async (request) => {
    const tool = find(request.params.tool);
    return {
      tool: `${prefix}/${tool.name}`,
      summary: tool.summary,
      call: `POST /actions/${tool.name}`,
      example: tool.example,
      input: inputJsonSchema(tool.inputSchema),
      output: outputJsonSchema(tool.outputSchema),
    };
  });

  app.post<{ Params: { tool: string } }>("/actions/:tool", async (request, reply) => {
    const tool = find(request.params.tool);
    // The caller hanging up cancels the work (subprocesses included).
    const gone = new AbortController();
    reply.raw.once("close", () => {
      if (!reply.raw.writableFinished) gone.abort();
    });
    return runTool(tool, request.body, runtime, { signal: gone.signal });
  });

  app.route({
    method: ["PUT", "PATCH", "DELETE"],
    url: "/actions/:tool",
    handler: async () => {
      throw new DiagError("E_UNSUPPORTED", "servers are read-only: call tools with POST /actions/<tool>");
    },
  });
}
