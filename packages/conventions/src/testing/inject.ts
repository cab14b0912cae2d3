/**
 * Call a tool, run a stream or build the HTTP app of a server definition through the kernel's runtime, without
 * listening: what a server's tests drive it with. Each call gets a fresh runtime, closed (its resources with it)
 * when the call ends, unless `runtime` names one the test keeps: then calls share its resources, bounds and
 * single-flights, and the test closes it.
 */
import type { FastifyInstance } from "fastify";
import type { BaseConfig } from "../define/config.ts";
import type { ServerDef } from "../define/server-def.ts";
import type { AnyStream, MessageOf } from "../define/stream.ts";
import type { AnyTool, InputOf, ResultOf } from "../define/tool.ts";
import type { Logger } from "../runtime/logger.ts";
import { runStream, type StreamEnd } from "../runtime/run-stream.ts";
import { runTool } from "../runtime/run-tool.ts";
import { createRuntime, type Runtime } from "../runtime/runtime.ts";
import { silentLogger } from "./silent-logger.ts";

export interface CallOptions {
  /** The server's environment (default: none, so the machine's own env never leaks into a test). */
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  signal?: AbortSignal;
  /** Receives what the tool passes to ctx.progress, as an /sse/<tool> caller would. */
  onProgress?: (progress: Record<string, unknown>) => void;
  /** Call through this runtime (from testRuntime) instead of a fresh one; `env` and `logger` are then its own. */
  runtime?: Runtime<unknown>;
}

export function testRuntime<C extends BaseConfig>(def: ServerDef<C>, options: CallOptions = {}): Runtime<C> {
  return createRuntime(def, { env: options.env ?? {}, logger: options.logger ?? silentLogger() });
}

/** Run a tool exactly as every surface does (strict input, deadline, result schema, summary). */
export function callTool<C extends BaseConfig, T extends AnyTool>(
  def: ServerDef<C>,
  tool: T,
  input: InputOf<T> | Record<string, unknown>,
  options: CallOptions = {},
): Promise<ResultOf<T>> {
  return within(def, options, (runtime) =>
    runTool(tool, input, runtime, { signal: options.signal, onProgress: options.onProgress }),
  );
}

/** The server's Fastify app (HTTP, SSE and /mcp) for `app.inject()`: silent, and no env unless given. */
export async function testApp<C extends BaseConfig>(
  def: ServerDef<C>,
  options: CallOptions = {},
): Promise<FastifyInstance> {
  // Loaded on first use, as main.ts does: a test that only calls tools never loads Fastify.
  const { buildApp } = await import("../http/http-app.ts");
  return buildApp(def, { env: options.env ?? {}, logger: options.logger ?? silentLogger() });
}

export interface CollectOptions<S extends AnyStream> extends CallOptions {
  /** Close the stream (as a client going away) after this many messages. */
  max?: number;
  /**
   * Awaited after each message (index from 0) before the stream goes on: change the world between rounds
   * (start a listener, switch a file) and see the next message report it.
   */
  onMessage?: (message: MessageOf<S>, index: number) => void | Promise<void>;
}

/** Run a stream to its end (or to `max` messages) and return every message and why it ended. */
export async function collectStream<C extends BaseConfig, S extends AnyStream>(
  def: ServerDef<C>,
  stream: S,
  input: Record<string, unknown>,
  options: CollectOptions<S> = {},
): Promise<{ messages: MessageOf<S>[]; end: StreamEnd }> {
  const messages: MessageOf<S>[] = [];
  const end = await within(def, options, (runtime) =>
    runStream(stream, input, runtime, {
      signal: options.signal,
      send: async (message) => {
        messages.push(message);
        await options.onMessage?.(message, messages.length - 1);
        return messages.length < (options.max ?? Number.POSITIVE_INFINITY);
      },
    }),
  );
  return { messages, end };
}

/** Run `work` in the test's runtime, or in a fresh one closed after it. */
async function within<C extends BaseConfig, R>(
  def: ServerDef<C>,
  options: CallOptions,
  work: (runtime: Runtime<unknown>) => Promise<R>,
): Promise<R> {
  if (options.runtime) return work(options.runtime);
  const runtime = testRuntime(def, options);
  try {
    return await work(runtime);
  } finally {
    await runtime.close();
  }
}
