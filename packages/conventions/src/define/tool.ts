/** defineTool: one definition (name, summary, zod input/output, read-only handler) for every surface. */
import { z } from "zod";
import type { ExecResult } from "../exec/exec.ts";
import type { OutboundPolicy } from "../outbound/policy.ts";
import type { Logger } from "../runtime/logger.ts";
import type { Resource } from "../runtime/resources.ts";
import type { Command, SlotValues } from "./command.ts";
import type { BaseConfig } from "./config.ts";
import { commonInputShape } from "./fields.ts";
import { renderView, type ViewFields } from "./model-view.ts";

export interface ExecCallOptions {
  /** Default: the time left before the call's deadline. */
  timeoutMs?: number;
  maxBytes?: number;
}

/** `ctx.exec`: run one of the commands this tool declared; deadline and cancel signal come from the call. */
export interface ToolExec {
  (cmd: Command<never>, values?: undefined, options?: ExecCallOptions): Promise<ExecResult>;
  <N extends string>(cmd: Command<N>, values: SlotValues<N>, options?: ExecCallOptions): Promise<ExecResult>;
}

/** What a handler gets besides its input: everything it may use to touch the world. */
export interface ToolContext<C = BaseConfig> {
  /** Aborts at the deadline or when the caller goes away. Pass it to everything that waits. */
  signal: AbortSignal;
  timeoutMs: number;
  /** Milliseconds left before the deadline (never below 1). */
  remaining(): number;
  /** What a probe may wait: remaining() less the kernel's deadline margin, so its diagnosis is answered in time. */
  budget(): number;
  runId: string | undefined;
  log: Logger;
  exec: ToolExec;
  outbound: OutboundPolicy;
  /** The server's config, typed by its kit's env schema. */
  config: C;
  /**
   * This runtime's instance of a resource (its kit's defineResource): made on first use, shared by every call
   * of this server, closed with the runtime. What a server keeps between calls lives here, not in a module.
   */
  use<T>(resource: Resource<T, C>): T;
  /**
   * How far a long call got (directories walked, bytes scanned): sent as an SSE `progress` event to a caller
   * of /sse/<tool>, dropped for every other caller and while the client is slow. Call it at most a few times
   * a second.
   */
  progress(progress: Record<string, unknown>): void;
}

export const resultCommonShape = {
  summary: z.string().describe("one line to repeat to the user"),
  run_id: z.string().optional().describe("the run_id you sent"),
};

export type ToolInputShape<I extends z.ZodRawShape> = I & typeof commonInputShape;
export type ToolOutputShape<O extends z.ZodRawShape> = O & typeof resultCommonShape;

export interface ToolSpec<I extends z.ZodRawShape, O extends z.ZodRawShape, C = BaseConfig> {
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
  /** The commands this tool may run (its share of the server's allowlist). */
  commands?: readonly Command[];
  /**
   * The answer is a snapshot of the machine (interfaces, routes, disks): identical calls within this many ms
   * get the same answer without running again. Leave unset for probes, whose answer must be fresh.
   */
  snapshotMs?: number;
  /** Input fields that name an outbound target: checked by the policy before the call runs; field → what it holds. */
  targets?: Readonly<Record<string, "url" | "host" | "ip">>;
  /** One line a small model can repeat, from the result. */
  summarize(result: z.output<z.ZodObject<O>>): string;
  /**
   * The model view: the few fields that decide the next step (a verdict's evidence, what to call next with),
   * by the name a model reads. The kernel puts the summary first and `next` last (model-view.ts); within
   * VIEW_BUDGET_TOKENS on real results (a test counts them with a real tokenizer).
   */
  view(result: z.output<z.ZodObject<ToolOutputShape<O>>>): ViewFields;
  handler(input: z.output<z.ZodObject<I>>, ctx: ToolContext<C>): Promise<z.input<z.ZodObject<O>>>;
}

export interface Tool<I extends z.ZodRawShape, O extends z.ZodRawShape, C = BaseConfig> extends ToolSpec<I, O, C> {
  /** The input schema every surface validates with: the tool's fields plus timeout_ms and run_id, strict. */
  inputSchema: z.ZodObject<ToolInputShape<I>, z.core.$strict>;
  /** The result schema: the tool's fields plus summary and run_id. Undeclared fields are dropped. */
  outputSchema: z.ZodObject<ToolOutputShape<O>>;
  commands: readonly Command[];
}

// biome-ignore lint/suspicious/noExplicitAny: a tool list mixes tools of every input/output shape and config
export type AnyTool = Tool<any, any, any>;

/** What a caller sends to a tool (timeout_ms and run_id included). */
export type InputOf<T extends AnyTool> = z.input<T["inputSchema"]>;
/** What a tool answers: its fields plus summary and run_id. */
export type ResultOf<T extends AnyTool> = z.output<T["outputSchema"]>;

/** What a tool's model view may take, counted with the Llama 3 tokenizer (a 3B-class model's). */
export const VIEW_BUDGET_TOKENS = 120;

/** A result as a small model reads it (summary, the tool's view fields, `next`); undefined if it fits no schema. */
export function viewOf(tool: AnyTool, result: Record<string, unknown>): string | undefined {
  const parsed = tool.outputSchema.safeParse(result);
  return parsed.success ? renderView(parsed.data, tool.view(parsed.data)) : undefined;
}

/** Views of results already rendered: callers sharing one execution (or a snapshot) share its result object. */
const checkedViews = new WeakMap<object, string>();

/**
 * The model view of a result runTool returned: already its output schema's output (no transforms in a result
 * schema, so parsing it again gives the same object), rendered without that second parse, once per result
 * object (ADR 0037).
 */
export function viewOfChecked(tool: AnyTool, result: ResultOf<AnyTool>): string {
  let view = checkedViews.get(result);
  if (view === undefined) {
    view = renderView(result, tool.view(result));
    checkedViews.set(result, view);
  }
  return view;
}

/** The model view, or the compact JSON of a result outside the tool's schema (a server's answer passed through). */
export function modelView(tool: AnyTool, result: Record<string, unknown>): string {
  return viewOf(tool, result) ?? JSON.stringify(result);
}

const TOOL_NAME = /^[a-z][a-z0-9_]{1,47}$/;

export function checkName(kind: string, name: string, summary: string): void {
  if (!TOOL_NAME.test(name)) throw new Error(`${kind} name must be snake_case: ${name}`);
  if (summary.includes("\n") || summary.length > 120) {
    throw new Error(`${kind} summary must be one line of at most 120 chars: ${name}`);
  }
}

export function defineTool<I extends z.ZodRawShape, O extends z.ZodRawShape, C = BaseConfig>(
  spec: ToolSpec<I, O, C>,
): Tool<I, O, C> {
  checkName("tool", spec.name, spec.summary);
  const inputSchema = z.strictObject({ ...spec.input, ...commonInputShape });
  const outputSchema = z.object({ ...spec.output, ...resultCommonShape });
  // A wrong example is a bug we want at start-up, not in a hint.
  inputSchema.parse(spec.example);
  return { ...spec, inputSchema, outputSchema, commands: spec.commands ?? [] };
}
