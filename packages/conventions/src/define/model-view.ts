/**
 * A result's second face: the model view, short text a small model reads (MCP text content, the orchestrator's
 * prompts). The kernel writes it from the tool's own `view` so every tool reads the same way: the summary (the
 * verdict) on the first line, whole; then the fields the tool chose as `key=value; …`, each value cut; then the
 * result's `next` step when it has one. Only what comes after the first line may ever be cut.
 */
import { z } from "zod";
import { cutText, oneLine } from "./limits.ts";

/** A value a view shows: a scalar, or a short list of them (undefined: left out). */
export type ViewValue = string | number | boolean | null | undefined | readonly (string | number)[];
/** The few fields that decide the next step, by the name a model reads. */
export type ViewFields = Readonly<Record<string, ViewValue>>;

/** A step the domain knows comes next: which tool (catalog id `<server>/<tool>`), with what, and why. */
export const nextStepSchema = z
  .object({
    tool: z.string().describe("catalog id <server>/<tool>, e.g. dns-config/dns_config_get"),
    args: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).describe("its input"),
    why: z.string().describe("one line"),
  })
  .describe("the call that tells more, when known");

/** The optional `next` output field a tool adds where it knows the next step. */
export const nextField = nextStepSchema.optional();

export type NextStep = z.output<typeof nextStepSchema>;

/** A value's longest text and a list's most items in a view: the budget is counted in tokens, this bounds it. */
export const VIEW_VALUE_CHARS = 80;
export const VIEW_LIST_ITEMS = 5;

function shown(value: Exclude<ViewValue, undefined>): string {
  if (value === null) return "none";
  if (typeof value === "string") return cutText(oneLine(value, VIEW_VALUE_CHARS), VIEW_VALUE_CHARS);
  if (typeof value !== "object") return String(value);
  const items = value.slice(0, VIEW_LIST_ITEMS).map((v) => cutText(oneLine(String(v), VIEW_VALUE_CHARS)));
  const more = value.length > VIEW_LIST_ITEMS ? ` (+${value.length - VIEW_LIST_ITEMS} more)` : "";
  return items.length ? `${items.join(", ")}${more}` : "none";
}

/** `key=value; …` of the fields that are set. */
export function viewLine(fields: ViewFields): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) parts.push(`${key}=${shown(value)}`);
  return parts.join("; ");
}

/** The `next:` line a model can act on: `next: <tool> {args} (why)`. */
export function nextLine(next: NextStep): string {
  return `next: ${next.tool} ${JSON.stringify(next.args)} (${oneLine(next.why, VIEW_VALUE_CHARS)})`;
}

/** A checked result as its tool's view reads it (summary first, whole; then the fields; then `next`). */
export function renderView(result: Readonly<Record<string, unknown>>, fields: ViewFields): string {
  const lines = [oneLine(typeof result.summary === "string" ? result.summary : "")];
  const line = viewLine(fields);
  if (line) lines.push(line);
  // Most results have no next step: no parse (a failed safeParse builds an error) for them.
  const next = result.next === undefined ? undefined : nextStepSchema.safeParse(result.next);
  if (next?.success) lines.push(nextLine(next.data));
  return lines.join("\n");
}

/**
 * A view cut to `max` characters (a model profile's room) without ever cutting the first line, the verdict:
 * only the fields and `next` lines give way.
 */
export function cutView(view: string, max: number): string {
  const nl = view.indexOf("\n");
  if (nl < 0 || view.length <= max) return view;
  const head = view.slice(0, nl);
  const room = max - head.length - 1;
  return room > 1 ? `${head}\n${cutText(view.slice(nl + 1), room)}` : head;
}
