/** Turn a zod failure into one message a small model can repair from: what was wrong, valid keys, an example. */
import type { z } from "zod";
import { DiagError } from "./errors.ts";

/** What input validation needs of a tool or a stream: its name, its strict schema and a valid example. */
export interface InputSpec {
  name: string;
  example: unknown;
  inputSchema: z.ZodObject;
}

export function invalidInput(tool: InputSpec, error: z.ZodError): DiagError {
  const validKeys = Object.keys(tool.inputSchema.shape);
  // One line per field: zod may report a field twice (an int check, then a range check), and the implicit
  // ±2^53 bound of .int() is noise beside the field's own bound.
  const seen = new Set<string>();
  const issues = error.issues.filter((issue) => {
    const key = issue.code === "unrecognized_keys" ? "(keys)" : issue.path.join(".");
    if (seen.has(key) || implicitSafeIntBound(issue)) return false;
    seen.add(key);
    return true;
  });
  const parts = (issues.length ? issues : error.issues).slice(0, 5).map((issue) => {
    if (issue.code === "unrecognized_keys") {
      return `unknown key ${issue.keys.map((k) => `'${k.slice(0, 40)}'`).join(", ")} (valid keys: ${validKeys.join(", ")})`;
    }
    const where = issue.path.length ? issue.path.join(".") : "input";
    return `${where}: ${issue.message.replace(/^Invalid input: /, "")}`;
  });
  return new DiagError("E_INVALID_INPUT", `${tool.name}: ${parts.join("; ")}`, {
    hint: `example: ${JSON.stringify(tool.example)}`,
  });
}

function implicitSafeIntBound(issue: z.core.$ZodIssue): boolean {
  const bound = (issue as { maximum?: unknown; minimum?: unknown }).maximum ?? (issue as { minimum?: unknown }).minimum;
  return bound === Number.MAX_SAFE_INTEGER || bound === Number.MIN_SAFE_INTEGER;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;
export const MAX_INPUT_STRING = 4096;

/** Checks no schema has to repeat: control characters and oversized strings anywhere in the input. */
export function checkRawStrings(tool: InputSpec, value: unknown, path = "input", depth = 0): void {
  if (depth > 6) throw new DiagError("E_INVALID_INPUT", `${tool.name}: ${path}: nested too deep`);
  if (typeof value === "string") {
    if (value.length > MAX_INPUT_STRING) {
      throw new DiagError("E_INVALID_INPUT", `${tool.name}: ${path}: string longer than ${MAX_INPUT_STRING} chars`, {
        hint: `example: ${JSON.stringify(tool.example)}`,
      });
    }
    if (CONTROL.test(value)) {
      throw new DiagError("E_INVALID_INPUT", `${tool.name}: ${path}: control characters are not allowed`, {
        hint: `example: ${JSON.stringify(tool.example)}`,
      });
    }
    return;
  }
  if (Array.isArray(value)) {
    for (const [i, v] of value.slice(0, 100).entries()) checkRawStrings(tool, v, `${path}[${i}]`, depth + 1);
    return;
  }
  if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      checkRawStrings(tool, k, `${path} key`, depth + 1);
      checkRawStrings(tool, v, path === "input" ? k : `${path}.${k}`, depth + 1);
    }
  }
}
