/**
 * Call a tool or run a stream of a server definition through the kernel's runtime, without HTTP. Each call
 * gets a fresh runtime, closed (its resources with it) when the call ends, unless `runtime` names one the test
 * keeps: then calls share its resources, bounds and single-flights, and the test closes it.
 */
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

/** Run a stream to its end and return every message and why it ended. */
export async function collectStream<C extends BaseConfig, S extends AnyStream>(
  def: ServerDef<C>,
  stream: S,
  input: Record<string, unknown>,
  options: CallOptions & { max?: number } = {},
): Promise<{ messages: MessageOf<S>[]; end: StreamEnd }> {
  const messages: MessageOf<S>[] = [];
  const end = await within(def, options, (runtime) =>
    runStream(stream, input, runtime, {
      signal: options.signal,
      send: async (message) => {
        messages.push(message);
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
