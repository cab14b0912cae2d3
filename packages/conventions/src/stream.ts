/** defineStream: a bounded SSE stream that emits `message` events until its work, its duration or the client ends. */
import { z } from "zod";
import type { ToolContext } from "./tool.ts";

export const DEFAULT_STREAM_DURATION_MS = 10_000;
export const MAX_STREAM_DURATION_MS = 300_000;
export const PING_INTERVAL_MS = 1000;

export interface StreamContext extends Omit<ToolContext, "timeoutMs" | "remaining"> {
  /** Send one `message` event (JSON). Resolves false once the client has gone. */
  emit(data: Record<string, unknown>): Promise<boolean>;
  /** Abortable sleep: resolves false when the stream is over. */
  sleep(ms: number): Promise<boolean>;
}

export interface StreamSpec<I extends z.ZodRawShape> {
  name: string;
  summary: string;
  input: I;
  example: z.input<z.ZodObject<I>>;
  /** The schema of each `message` event's data, for docs and clients. */
  message: z.ZodObject;
  openWorld?: boolean;
  run(input: z.output<z.ZodObject<I>>, ctx: StreamContext): Promise<void>;
}

export interface Stream<I extends z.ZodRawShape> extends StreamSpec<I> {
  inputSchema: z.ZodObject;
}

// biome-ignore lint/suspicious/noExplicitAny: a stream list mixes input shapes
export type AnyStream = Stream<any>;

export const streamCommonShape = {
  duration_ms: z
    .number()
    .int()
    .min(100)
    .max(MAX_STREAM_DURATION_MS)
    .optional()
    .describe(`stop after this long (default ${DEFAULT_STREAM_DURATION_MS})`),
  run_id: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,64}$/)
    .optional()
    .describe("caller's id, echoed in each message"),
};

export function defineStream<I extends z.ZodRawShape>(spec: StreamSpec<I>): Stream<I> {
  const inputSchema = z.strictObject({ ...streamCommonShape, ...spec.input });
  inputSchema.parse(spec.example);
  return { ...spec, inputSchema };
}
