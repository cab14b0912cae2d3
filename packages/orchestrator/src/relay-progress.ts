/**
 * A server's tool called with its progress relayed (ADR 0030, relay): GET /sse/<tool> instead of POST /actions,
 * each `progress` event handed on, the `message` event the result, and an `error` event thrown as the
 * RemoteError /actions would have answered (400s and 503s before the stream come from the client as they do for
 * /actions). Used only when the caller asked for progress and the arguments read back from a query string
 * (the server reads them with the kernel's queryToInput) are exactly the arguments: else the call stays on
 * POST /actions, with its result and no progress.
 */
import { isDeepStrictEqual } from "node:util";
import { type CallOptions, RemoteError, type RoadNerdClient } from "@roadnerd/client";
import { queryToInput } from "@roadnerd/conventions/internal";
import type { z } from "zod";
import { httpStatusOf } from "./errors.ts";

/** What a relayed call needs: the query /sse/<tool> reads, and where each progress report goes. */
export interface ProgressRelay {
  query: Record<string, string>;
  onProgress: (progress: Record<string, unknown>) => void;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The arguments as /sse/<tool>'s query string, or undefined when the server would not read them back the same. */
export function streamQuery(schema: z.ZodObject, args: Record<string, unknown>): Record<string, string> | undefined {
  const query: Record<string, string> = {};
  for (const [key, value] of Object.entries(args)) {
    if (typeof value === "string") query[key] = value;
    else if (typeof value === "number" || typeof value === "boolean") query[key] = String(value);
    else if (typeof value === "object" && value !== null) query[key] = JSON.stringify(value);
    else return undefined;
  }
  try {
    return isDeepStrictEqual(queryToInput(schema, query), args) ? query : undefined;
  } catch {
    return undefined;
  }
}

/** The tool's result from its stream, its progress reports handed to the relay on the way. */
export async function callWithProgress(
  client: RoadNerdClient,
  tool: string,
  relay: ProgressRelay,
  options: CallOptions,
): Promise<Record<string, unknown>> {
  let result: Record<string, unknown> | undefined;
  for await (const event of client.stream(tool, relay.query, options)) {
    if (event.event === "progress" && isRecord(event.data)) relay.onProgress(event.data);
    else if (event.event === "message" && isRecord(event.data)) result = event.data;
    else if (event.event === "error") {
      const e = isRecord(event.data) ? event.data : {};
      if (typeof e.code !== "string") break;
      const hint = typeof e.hint === "string" ? e.hint : undefined;
      throw new RemoteError(e.code, String(e.message ?? ""), httpStatusOf(e.code), hint);
    }
  }
  if (result) return result;
  // Not a RoadNerd server's stream (no result, no error of ours): the gateway says so as E_ATTACH.
  throw new RemoteError("E_INTERNAL", "unexpected response (a stream with no result)", 502, undefined, true);
}
