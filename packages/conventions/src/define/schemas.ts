/** JSON Schema from zod, made once per schema: the catalog, OpenAPI, docs and MCP all read these. */
import { z } from "zod";

export type JsonSchema = Record<string, unknown>;

const cache = new WeakMap<z.ZodType, { input: JsonSchema; output: JsonSchema }>();

const SAFE_INT = Number.MAX_SAFE_INTEGER;

/** zod writes ±MAX_SAFE_INTEGER bounds on every .int(): noise in what a small model reads, so drop them. */
function dropSafeIntBounds(node: unknown): void {
  if (Array.isArray(node)) {
    for (const n of node) dropSafeIntBounds(n);
    return;
  }
  if (!node || typeof node !== "object") return;
  const o = node as Record<string, unknown>;
  if (o.minimum === -SAFE_INT) delete o.minimum;
  if (o.maximum === SAFE_INT) delete o.maximum;
  for (const v of Object.values(o)) dropSafeIntBounds(v);
}

function convert(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const json = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as JsonSchema;
  delete json.$schema;
  dropSafeIntBounds(json);
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
