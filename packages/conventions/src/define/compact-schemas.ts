/**
 * The short forms of a tool's schemas that tools/list and GET /actions serve, for a small model's context:
 * the input keeps every field of the tool with its description and constraints, the common fields
 * (timeout_ms, run_id) only their types and bounds; the output declares the result's fields and their types,
 * one level deep. A model chooses a tool by its input; the output's detail is for readers of the docs. The full schemas, nested and described, are at GET /actions/<tool>, /openapi.json and in
 * each README.
 */
import { commonInputShape } from "./fields.ts";
import { inputJsonSchema, type JsonSchema, outputJsonSchema } from "./schemas.ts";
import type { AnyTool } from "./tool.ts";

const COMMON = new Set(Object.keys(commonInputShape));
const compactCache = new WeakMap<AnyTool, { input: JsonSchema; output: JsonSchema }>();

/** A property's type in a few bytes: its type (or types), nothing nested, no enum (the full schema has them). */
function shallow(prop: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  const anyOf = prop.anyOf as JsonSchema[] | undefined;
  if (anyOf) {
    const types = [...new Set(anyOf.map((p) => p.type ?? (p.const === null ? "null" : undefined)).filter(Boolean))];
    if (types.length) out.type = types.length === 1 ? types[0] : types;
    return out;
  }
  if (prop.type !== undefined) out.type = prop.type;
  else if (typeof prop.const === "string") out.type = "string";
  return out;
}

function compactInput(full: JsonSchema): JsonSchema {
  const props = (full.properties ?? {}) as Record<string, JsonSchema>;
  const properties: Record<string, JsonSchema> = {};
  for (const [name, prop] of Object.entries(props)) {
    if (!COMMON.has(name)) {
      properties[name] = prop;
      continue;
    }
    // The common fields: types and bounds only (their rules are the same on every tool, and in the docs).
    const { description: _d, pattern: _p, ...rest } = prop;
    properties[name] = rest;
  }
  return { ...full, properties };
}

function compactOutput(full: JsonSchema): JsonSchema {
  const props = (full.properties ?? {}) as Record<string, JsonSchema>;
  const properties = Object.fromEntries(Object.entries(props).map(([name, prop]) => [name, shallow(prop)]));
  return { type: "object", properties, ...(full.required ? { required: full.required } : {}) };
}

export function compactSchemas(tool: AnyTool): { input: JsonSchema; output: JsonSchema } {
  let c = compactCache.get(tool);
  if (!c) {
    c = {
      input: compactInput(inputJsonSchema(tool.inputSchema)),
      output: compactOutput(outputJsonSchema(tool.outputSchema)),
    };
    compactCache.set(tool, c);
  }
  return c;
}
