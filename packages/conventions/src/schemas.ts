/** JSON Schema from zod, made once per schema: the catalog, OpenAPI, docs and MCP all read these. */
import { z } from "zod";

export type JsonSchema = Record<string, unknown>;

const cache = new WeakMap<z.ZodType, { input: JsonSchema; output: JsonSchema }>();

function convert(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const json = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as JsonSchema;
  delete json.$schema;
  return json;
}

export function inputJsonSchema(schema: z.ZodType): JsonSchema {
  return entry(schema).input;
}

export function outputJsonSchema(schema: z.ZodType): JsonSchema {
  return entry(schema).output;
}

function entry(schema: z.ZodType) {
  let e = cache.get(schema);
  if (!e) {
    e = { input: convert(schema, "input"), output: convert(schema, "output") };
    cache.set(schema, e);
  }
  return e;
}
