/** defineStream: a bounded stream that emits `message` events until its work, its duration or the client ends. */
import { z } from "zod";
import type { LineProcess } from "../exec/exec.ts";
import type { Command, SlotValues } from "./command.ts";
import type { BaseConfig } from "./config.ts";
import { runIdField } from "./fields.ts";
import { type AnyTool, checkName, type InputOf, type ResultOf, resultCommonShape, type ToolContext } from "./tool.ts";

export const DEFAULT_STREAM_DURATION_MS = 10_000;
export const MAX_STREAM_DURATION_MS = 300_000;
export const PING_INTERVAL_MS = 1000;

export interface LinesCallOptions {
  /** Default: the time left in the stream (for a shared producer, MAX_STREAM_DURATION_MS). */
  timeoutMs?: number;
  maxLineChars?: number;
}

/**
 * `ctx.execLines`: run one of the commands this stream declared and read its stdout line by line (a follow
 * mode such as journalctl --follow); ended when the stream ends, its consumer leaves or the reader stops.
 */
export interface StreamExecLines {
  (cmd: Command<never>, values?: undefined, options?: LinesCallOptions): Promise<LineProcess>;
  <N extends string>(cmd: Command<N>, values: SlotValues<N>, options?: LinesCallOptions): Promise<LineProcess>;
}

export interface StreamContext<C = BaseConfig, M extends z.ZodRawShape = z.ZodRawShape>
  extends Omit<ToolContext<C>, "timeoutMs" | "remaining" | "budget" | "progress"> {
  /** Send one `message` (checked against the stream's message schema; summary and run_id added). False once the client is gone. */
  emit(data: z.input<z.ZodObject<M>>): Promise<boolean>;
  execLines: StreamExecLines;
  /** Abortable sleep: resolves false when the stream is over. */
  sleep(ms: number): Promise<boolean>;
  /** Call a tool through the kernel (validation, deadline, result schema), typed by its definition. */
  call<T extends AnyTool>(tool: T, input: InputOf<T>): Promise<ResultOf<T>>;
}

export interface StreamSpec<I extends z.ZodRawShape, M extends z.ZodRawShape, C = BaseConfig> {
  name: string;
  summary: string;
  input: I;
  example: z.input<z.ZodObject<I>>;
  /** The fields of each `message` event; the kernel adds summary and run_id. */
  message: M;
  openWorld?: boolean;
  /** The commands this stream may run itself (tools it calls bring their own). */
  commands?: readonly Command[];
  /** Input fields that name an outbound target: checked by the policy before the stream opens; field → what it holds. */
  targets?: Readonly<Record<string, "url" | "host" | "ip">>;
  /**
   * Its messages depend only on its input (default true): every open stream with the same input is fed by
   * one producer (the stream hub). Set false for a stream whose work is per consumer.
   */
  shared?: boolean;
  /** One line for each message. */
  summarize(message: z.output<z.ZodObject<M>>): string;
  /** Gets the whole checked input: its own fields, duration_ms and run_id. */
  run(input: z.output<z.ZodObject<I & typeof streamCommonShape>>, ctx: StreamContext<C, M>): Promise<void>;
}

export const streamCommonShape = {
  duration_ms: z
    .number()
    .int()
    .min(100)
    .max(MAX_STREAM_DURATION_MS)
    .optional()
    .describe(`stop after this long (default ${DEFAULT_STREAM_DURATION_MS})`),
  run_id: runIdField.describe("caller's id, echoed in each message"),
};

export interface Stream<I extends z.ZodRawShape, M extends z.ZodRawShape, C = BaseConfig> extends StreamSpec<I, M, C> {
  inputSchema: z.ZodObject<I & typeof streamCommonShape, z.core.$strict>;
  messageSchema: z.ZodObject<M & typeof resultCommonShape>;
  commands: readonly Command[];
}

// biome-ignore lint/suspicious/noExplicitAny: a stream list mixes input and message shapes
export type AnyStream = Stream<any, any, any>;

/** One message of a stream, as a client receives it. */
export type MessageOf<S extends AnyStream> = z.output<S["messageSchema"]>;

export function defineStream<I extends z.ZodRawShape, M extends z.ZodRawShape, C = BaseConfig>(
  spec: StreamSpec<I, M, C>,
): Stream<I, M, C> {
  checkName("stream", spec.name, spec.summary);
  const inputSchema = z.strictObject({ ...spec.input, ...streamCommonShape });
  inputSchema.parse(spec.example);
  const messageSchema = z.object({ ...spec.message, ...resultCommonShape });
  return { ...spec, inputSchema, messageSchema, commands: spec.commands ?? [] };
}
