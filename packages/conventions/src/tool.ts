/** defineTool: one definition (name, summary, zod input/output, read-only handler) for every surface. */
import { z } from "zod";
import type { BaseConfig } from "./config.ts";
import type { Exec } from "./exec.ts";
import { commonInputShape } from "./fields.ts";
import type { Logger } from "./logger.ts";
import type { OutboundPolicy } from "./outbound/policy.ts";

/** What a handler gets besides its input: everything it may use to touch the world. */
export interface ToolContext {
  /** Aborts at the deadline or when the caller goes away. Pass it to everything that waits. */
  signal: AbortSignal;
  timeoutMs: number;
  /** Milliseconds left before the deadline (never below 1). */
  remaining(): number;
  runId: string | undefined;
  log: Logger;
  exec: Exec;
  outbound: OutboundPolicy;
  config: Readonly<BaseConfig & Record<string, unknown>>;
}

// biome-ignore lint/suspicious/noExplicitAny: a tool list mixes tools of every input/output shape
export type AnyTool = Tool<any, any>;

export interface ToolSpec<I extends z.ZodRawShape, O extends z.ZodRawShape> {
  /** Wire name, snake_case, as in the spec. */
  name: string;
  /** One line a 3B model can read in a catalog. */
  summary: string;
  input: I;
  output: O;
  /** A valid input, shown in E_INVALID_INPUT hints and docs. */
  example: z.input<z.ZodObject<I>>;
  /** True when the tool probes the network (MCP openWorldHint). */
  openWorld?: boolean;
  /** One line a small model can repeat, from the result. */
  summarize(result: z.output<z.ZodObject<O>>): string;
  handler(input: z.output<z.ZodObject<I>>, ctx: ToolContext): Promise<z.input<z.ZodObject<O>>>;
}

export interface Tool<I extends z.ZodRawShape, O extends z.ZodRawShape> extends ToolSpec<I, O> {
  /** The input schema both surfaces validate with: the tool's fields plus timeout_ms and run_id, strict. */
  inputSchema: z.ZodObject;
  /** The result schema: the tool's fields plus summary and run_id. Undeclared fields are dropped. */
  outputSchema: z.ZodObject;
}

export const resultCommonShape = {
  summary: z.string().describe("one line to repeat to the user"),
  run_id: z.string().optional().describe("the run_id you sent"),
};

const TOOL_NAME = /^[a-z][a-z0-9_]{1,47}$/;

export function defineTool<I extends z.ZodRawShape, O extends z.ZodRawShape>(spec: ToolSpec<I, O>): Tool<I, O> {
  if (!TOOL_NAME.test(spec.name)) throw new Error(`tool name must be snake_case: ${spec.name}`);
  if (spec.summary.includes("\n") || spec.summary.length > 120) {
    throw new Error(`tool summary must be one line of at most 120 chars: ${spec.name}`);
  }
  const inputSchema = z.strictObject({ ...spec.input, ...commonInputShape });
  const outputSchema = z.object({ ...spec.output, ...resultCommonShape });
  // A wrong example is a bug we want at start-up, not in a hint.
  inputSchema.parse(spec.example);
  return { ...spec, inputSchema, outputSchema };
}
