/**
 * Tool results as the planners read them: typed by the servers' own output schemas (the tool definitions are
 * imported from the server packages, known-tools.ts), checked by those schemas when read, never cast.
 */
import type { AnyTool } from "@roadnerd/conventions";
import { z } from "zod";
import type { StepRecord } from "./planner.ts";

/** A server's tool by its catalog id `<server>/<tool>`, with the output schema that types its results. */
export interface KnownTool<S extends z.ZodType> {
  readonly id: string;
  readonly output: S;
}

export const knownTool = <T extends AnyTool>(server: string, tool: T): KnownTool<T["outputSchema"]> => ({
  id: `${server}/${tool.name}`,
  output: tool.outputSchema,
});

/** The latest successful result of `known` in the history (undefined if not called), typed by its schema. */
export function latestResult<S extends z.ZodType>(
  history: readonly StepRecord[],
  known: KnownTool<S>,
): z.output<S> | undefined {
  const step = history.findLast((s) => s.tool === known.id);
  if (!step?.ok) return undefined;
  const parsed = z.safeParse(known.output, step.result);
  if (parsed.success) return parsed.data;
  const where = parsed.error.issues.slice(0, 3).map((i) => i.path.join(".") || "result");
  throw new Error(`${known.id} answered outside its own result schema (${where.join(", ")})`);
}
