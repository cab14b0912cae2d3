/** Query strings carry only text: coerce each value to the type the schema's JSON Schema asks for. */
import { z } from "zod";
import { DiagError } from "../errors/errors.ts";

const typesCache = new WeakMap<z.ZodObject, Record<string, string>>();

function propertyTypes(schema: z.ZodObject): Record<string, string> {
  let types = typesCache.get(schema);
  if (!types) {
    const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as {
      properties?: Record<string, { type?: string; anyOf?: Array<{ type?: string }> }>;
    };
    types = {};
    for (const [key, prop] of Object.entries(json.properties ?? {})) {
      types[key] = prop.type ?? prop.anyOf?.find((p) => p.type)?.type ?? "string";
    }
    typesCache.set(schema, types);
  }
  return types;
}

function coerce(value: string, type: string | undefined): unknown {
  switch (type) {
    case "integer":
    case "number":
      // Plain decimal only, so `0x1`, `1e3` or ` 80 ` are refused here as they are in a JSON body.
      return /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
    case "boolean":
      return value === "true" ? true : value === "false" ? false : value;
    case "object":
    case "array":
      try {
        return JSON.parse(value);
      } catch {
        return value;
      }
    default:
      return value;
  }
}

/**
 * A `__proto__` parameter never reaches the parsed query (the parser drops it), so the strict check cannot see
 * it: refused from the raw query string, as the key is in a JSON body (an attacker review, ADR 0063).
 */
export function refusePoisonedQuery(url: string | undefined): void {
  const at = url?.indexOf("?") ?? -1;
  if (at < 0 || !url) return;
  for (const key of new URLSearchParams(url.slice(at + 1)).keys()) {
    if (/^__proto__(?:\[|$)/.test(key)) {
      throw new DiagError("E_INVALID_INPUT", "keys named __proto__ or constructor.prototype are refused");
    }
  }
}

export function queryToInput(schema: z.ZodObject, query: Record<string, unknown>): Record<string, unknown> {
  const types = propertyTypes(schema);
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(query)) {
    // A repeated parameter is ambiguous (which unit, which path?): refused, as two values in a JSON body would be.
    if (Array.isArray(raw)) throw new DiagError("E_INVALID_INPUT", `${key}: given ${raw.length} times; give it once`);
    const value = raw;
    out[key] = typeof value === "string" ? coerce(value, types[key]) : value;
  }
  return out;
}
