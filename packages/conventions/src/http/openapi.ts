/** OpenAPI 3.1 for /actions and /sse, generated from the same zod schemas (3.1 speaks JSON Schema 2020-12). */

import { inputJsonSchema, type JsonSchema, outputJsonSchema } from "../define/schemas.ts";
import type { AnyStream } from "../define/stream.ts";
import type { AnyTool } from "../define/tool.ts";
import { ERROR_CODES, ERROR_MEANING } from "../errors/errors.ts";

const errorSchema: JsonSchema = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      properties: {
        code: {
          type: "string",
          enum: [...ERROR_CODES],
          description: ERROR_CODES.map((c) => `${c}: ${ERROR_MEANING[c]}`).join("\n"),
        },
        message: { type: "string" },
        hint: { type: "string" },
      },
    },
    run_id: { type: "string" },
  },
};

function queryParameters(schema: JsonSchema) {
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries(props).map(([name, s]) => ({ name, in: "query", required: required.has(name), schema: s }));
}

export function buildOpenApi(
  info: { name: string; version: string },
  tools: readonly AnyTool[],
  streams: readonly AnyStream[],
): JsonSchema {
  const paths: Record<string, unknown> = {
    "/healthz": {
      get: { summary: "liveness and what this server can see", responses: { "200": { description: "ok" } } },
    },
    "/actions": {
      get: { summary: "catalog of tools", responses: { "200": { description: "[{tool, summary, input}]" } } },
    },
  };
  const errorResponse = {
    description: "typed error",
    content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
  };
  for (const tool of tools) {
    paths[`/actions/${tool.name}`] = {
      post: {
        operationId: tool.name,
        summary: tool.summary,
        requestBody: {
          required: true,
          content: { "application/json": { schema: inputJsonSchema(tool.inputSchema), example: tool.example } },
        },
        responses: {
          "200": {
            description: "result",
            content: { "application/json": { schema: outputJsonSchema(tool.outputSchema) } },
          },
          "4XX": errorResponse,
          "5XX": errorResponse,
        },
      },
    };
  }
  for (const s of [...streams, ...tools]) {
    paths[`/sse/${s.name}`] = {
      get: {
        operationId: `sse_${s.name}`,
        summary: `${s.summary} (SSE: ping, message, error, end)`,
        parameters: queryParameters(inputJsonSchema(s.inputSchema)),
        responses: { "200": { description: "text/event-stream" }, "4XX": errorResponse },
      },
    };
  }
  return {
    openapi: "3.1.0",
    info: { title: info.name, version: info.version },
    paths,
    components: { schemas: { Error: errorSchema } },
  };
}
