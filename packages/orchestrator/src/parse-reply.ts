/**
 * Strict parsing of a planner's reply: exactly one JSON object, either a call
 * `{"tool":"<server>/<tool>","params":{...}}` or a verdict `{"label":"<label>","reason":"..."}`. Prose
 * around it, code fences, two objects, an array, a wrong name or params that fail the tool's own schema
 * are invalid. A near-miss name (`dns/resolve`, `network.dns_resolve`, `dns_resolve`) is resolved when it
 * fits exactly one tool and answered with suggestions when it does not. A Decision a planner made in code
 * skips only the text layer: its object passes the same checks.
 */
import type { Catalog, CatalogEntry } from "./catalog.ts";
import type { OrchestratorCode } from "./errors.ts";
import { isLabel, LABELS, type Label } from "./labels.ts";
import type { Decision, Reply } from "./planners/planner.ts";

export interface ToolCall {
  id: string;
  server: string;
  tool: string;
  params: Record<string, unknown>;
}

export type Invalid = { kind: "invalid"; code: OrchestratorCode; message: string; suggestions?: string[] };

export type ParsedReply =
  | { kind: "call"; call: ToolCall; resolvedFrom?: string }
  | { kind: "label"; label: Label; reason: string }
  | Invalid;

/** Top-level `{…}` / `[…]` spans of a text, strings and escapes respected. */
function jsonSpans(text: string): string[] {
  const spans: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i += 1;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"' && depth > 0) inString = true;
    else if (c === "{" || c === "[") {
      if (depth === 0) start = i;
      depth += 1;
    } else if ((c === "}" || c === "]") && depth > 0) {
      depth -= 1;
      if (depth === 0) spans.push(text.slice(start, i + 1));
    }
  }
  return spans;
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

const invalid = (code: OrchestratorCode, message: string, suggestions?: string[]): Invalid =>
  suggestions ? { kind: "invalid", code, message, suggestions } : { kind: "invalid", code, message };

/** The one JSON object of a reply, or why there is not exactly one. */
function oneObject(reply: string): { object: Record<string, unknown> } | Invalid {
  const text = reply.trim();
  const whole = tryJson(text);
  if (isObject(whole)) return { object: whole };
  if (Array.isArray(whole)) return invalid("E_NOT_ONE_JSON", "an array: return ONE JSON object, one call per turn");
  const parsed = jsonSpans(text)
    .map(tryJson)
    .filter((v) => v !== undefined);
  const objects = parsed.flatMap((v) => (Array.isArray(v) ? v : [v])).filter(isObject);
  if (objects.length > 1 || parsed.some(Array.isArray)) {
    return invalid("E_NOT_ONE_JSON", `${objects.length} JSON objects: return ONE call per turn`);
  }
  if (objects.length === 1) {
    const fenced = /^```/.test(text);
    return invalid(
      "E_NOT_ONE_JSON",
      fenced ? "code fences around the JSON: return the bare JSON object" : "prose around the JSON: return only it",
    );
  }
  return invalid("E_NOT_ONE_JSON", "no JSON object in the reply");
}

const tokens = (name: string) =>
  name
    .toLowerCase()
    .split(/[/._:\-\s]+/)
    .filter(Boolean);

/** Edit distance, for suggestions when no tool fits. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i += 1) {
    let prev = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j += 1) {
      const cur = row[j] ?? 0;
      row[j] = Math.min(cur + 1, (row[j - 1] ?? 0) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length] ?? 0;
}

/** The tool a name means: exact, the same with another separator, a bare tool name, or all-tokens match. */
export function resolveToolName(
  name: string,
  catalog: Catalog,
): { entry: CatalogEntry; exact: boolean } | { candidates: string[] } {
  const exact = catalog.get(name);
  if (exact) return { entry: exact, exact: true };
  const ids = catalog.entries.map((e) => e.id);
  const sep = /^([a-z0-9-]+)(?:\.|::|:|__|\/)([a-z0-9_]+)$/i.exec(name.trim());
  if (sep) {
    const same = catalog.get(`${sep[1]?.toLowerCase()}/${sep[2]?.toLowerCase()}`);
    if (same) return { entry: same, exact: false };
  }
  const bare = catalog.entries.filter((e) => e.tool === name.trim().toLowerCase());
  if (bare.length === 1 && bare[0]) return { entry: bare[0], exact: false };
  if (bare.length > 1) return { candidates: bare.map((e) => e.id) };
  const want = tokens(name);
  const covering = want.length
    ? catalog.entries.filter((e) => {
        const have = tokens(e.id);
        return want.every((t) => have.includes(t));
      })
    : [];
  if (covering.length === 1 && covering[0]) return { entry: covering[0], exact: false };
  if (covering.length > 1) return { candidates: covering.map((e) => e.id) };
  const lower = name.toLowerCase().slice(0, 64);
  const ranked = ids
    .map((id) => ({ id, d: Math.min(distance(lower, id), distance(lower, id.split("/")[1] ?? id)) }))
    .sort((a, b) => a.d - b.d || a.id.localeCompare(b.id))
    .slice(0, 3)
    .map((x) => x.id);
  return { candidates: ranked };
}

/** A planner's reply, checked: a model's text must be exactly one JSON object; a Decision is checked as it is. */
export function parseReply(reply: Reply, catalog: Catalog): ParsedReply {
  if (typeof reply !== "string") return checkObject(reply, catalog);
  const one = oneObject(reply);
  return "object" in one ? checkObject(one.object, catalog) : one;
}

/** One object against the two shapes, the closed label set, the catalog and the tool's own input schema. */
function checkObject(o: Record<string, unknown> | Decision, catalog: Catalog): ParsedReply {
  const keys = Object.keys(o).sort().join(",");
  if ("label" in o) {
    if (keys !== "label,reason" || typeof o.reason !== "string") {
      return invalid("E_BAD_SHAPE", 'a verdict is exactly {"label":"<label>","reason":"<why>"}');
    }
    if (!isLabel(o.label)) return invalid("E_BAD_LABEL", `label must be one of: ${LABELS.join(", ")}`);
    return { kind: "label", label: o.label, reason: o.reason.slice(0, 300) };
  }
  if (keys !== "params,tool" || !("tool" in o) || typeof o.tool !== "string" || !isObject(o.params)) {
    const missing =
      "tool" in o && typeof o.tool === "string" && !("params" in o) ? ' (missing "params": use {} when none)' : "";
    return invalid("E_BAD_SHAPE", `a call is exactly {"tool":"<server>/<tool>","params":{...}}${missing}`);
  }
  return checkCall(o.tool, o.params, catalog);
}

/** A call by name: the name resolved against the catalog (near misses too), the params by the tool's schema. */
export function checkCall(
  name: string,
  params: Record<string, unknown>,
  catalog: Catalog,
): Extract<ParsedReply, { kind: "call" }> | Invalid {
  const found = resolveToolName(name, catalog);
  if ("candidates" in found) {
    return invalid("E_UNKNOWN_TOOL", `no tool named ${name.slice(0, 64)}`, found.candidates);
  }
  const { entry } = found;
  const checked = entry.definition.inputSchema.safeParse(params);
  if (!checked.success) {
    const issues = checked.error.issues
      .slice(0, 3)
      .map((i: { path: PropertyKey[]; message: string }) => `${i.path.join(".") || "params"}: ${i.message}`)
      .join("; ");
    const example = JSON.stringify({ tool: entry.id, params: entry.definition.example });
    return invalid("E_INVALID_INPUT", `${entry.id}: ${issues}. Example: ${example}`);
  }
  const call: ToolCall = { id: entry.id, server: entry.server, tool: entry.tool, params };
  return found.exact ? { kind: "call", call } : { kind: "call", call, resolvedFrom: name.slice(0, 64) };
}
