/** Output limits: small models read short outputs, so every list is capped and says what it left out. */
import { z } from "zod";

export const DEFAULT_LIST_LIMIT = 20;
export const MAX_LIST_LIMIT = 500;
export const DEFAULT_TEXT_LIMIT = 300;

/** The largest request body over HTTP and the largest message over stdio: tool inputs are small. */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** The `limit` input every list-returning tool accepts. */
export const limitInput = z
  .number()
  .int()
  .min(1)
  .max(MAX_LIST_LIMIT)
  .optional()
  .describe(`max items per list (default ${DEFAULT_LIST_LIMIT})`);

/** Output fields that say a list was cut. */
export const truncationFields = {
  truncated: z.boolean().describe("true when a list was cut to `limit`"),
  omitted: z.number().int().min(0).describe("items left out by the cap"),
};

export interface Capped<T> {
  items: T[];
  omitted: number;
}

export function capList<T>(items: readonly T[], limit: number = DEFAULT_LIST_LIMIT): Capped<T> {
  if (items.length <= limit) return { items: [...items], omitted: 0 };
  return { items: items.slice(0, limit), omitted: items.length - limit };
}

/** Cut a string to `max` characters, marking the cut with an ellipsis. */
export function cutText(text: string, max: number = DEFAULT_TEXT_LIMIT): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/** Collapse whitespace and cut: used for one-line summaries a 3B model repeats. */
export function oneLine(text: string, max = 160): string {
  return cutText(text.replace(/\s+/g, " ").trim(), max);
}
