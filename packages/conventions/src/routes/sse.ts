/**
 * SSE routes: `/sse/<tool>` for every tool (ping while it runs, one message, end) and `/sse/<stream>` for
 * defined streams. Events: ping, message (JSON), error (JSON {code,message}), end. Every stream is bounded and
 * its work (subprocesses included) is aborted when the client goes away. Event names are our fixed set and ids
 * are counters we make: @fastify/sse writes both unescaped.
 */
import type { FastifyInstance, FastifyReply } from "fastify";
import { z } from "zod";
import { DiagError, errorBody, toDiagError } from "../errors.ts";
import { queryToInput } from "../query-input.ts";
import { type BaseContext, parseToolInput, runParsedTool } from "../run-tool.ts";
import { type AnyStream, DEFAULT_STREAM_DURATION_MS, PING_INTERVAL_MS, type StreamContext } from "../stream.ts";
import { unknownTool } from "../suggest.ts";
import type { AnyTool } from "../tool.ts";

type EventName = "ping" | "message" | "error" | "end";

interface Sender {
  send(event: EventName, data: unknown): Promise<boolean>;
  readonly connected: boolean;
}

/** Sends never outlive the client: a write waiting for `drain` is abandoned when the connection closes. */
function sender(reply: FastifyReply, closed: Promise<void>): Sender {
  let id = 0;
  return {
    get connected() {
      return reply.sse?.isConnected ?? false;
    },
    async send(event, data) {
      if (!reply.sse?.isConnected) return false;
      id += 1;
      await Promise.race([reply.sse.send({ id: String(id), event, data }), closed]);
      return reply.sse.isConnected;
    },
  };
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const t = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      resolve(false);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

export function registerSse(
  app: FastifyInstance,
  tools: readonly AnyTool[],
  streams: readonly AnyStream[],
  base: BaseContext,
): void {
  const toolsByName = new Map(tools.map((t) => [t.name, t]));
  const streamsByName = new Map(streams.map((s) => [s.name, s]));
  const names = [...streamsByName.keys(), ...toolsByName.keys()];

  app.get<{ Params: { name: string }; Querystring: Record<string, unknown> }>(
    "/sse/:name",
    { sse: { kind: "manual", heartbeat: false } },
    async (request, reply) => {
      const name = request.params.name;
      const stream = streamsByName.get(name);
      const tool = toolsByName.get(name);
      if (!stream && !tool) {
        throw unknownTool(name, names, "stream");
      }
      const schema = (stream ?? (tool as AnyTool)).inputSchema;
      const rawInput = queryToInput(schema, request.query);
      // Validate before the stream starts, so a bad query is a plain 400 with the typed error body.
      const input = parseToolInput(stream ?? (tool as AnyTool), rawInput);
      const runId = input.run_id as string | undefined;
      const controller = new AbortController();
      let pinger: NodeJS.Timeout | undefined;
      const closed = new Promise<void>((resolve) =>
        reply.sse.onClose(() => {
          clearInterval(pinger);
          controller.abort();
          resolve();
        }),
      );
      const out = sender(reply, closed);
      pinger = setInterval(() => void out.send("ping", { t: Date.now() }), PING_INTERVAL_MS);
      try {
        await out.send("ping", { t: Date.now() });
        if (tool) {
          const result = await runParsedTool(tool, input, base, { signal: controller.signal });
          await out.send("message", result);
        } else if (stream) {
          const duration = (input.duration_ms as number | undefined) ?? DEFAULT_STREAM_DURATION_MS;
          const messageSchema = stream.message.extend({ run_id: z.string().optional() });
          const stopAt = setTimeout(() => controller.abort(), duration);
          try {
            const ctx: StreamContext = {
              ...base,
              log: base.log.child({ stream: stream.name, run_id: runId }),
              signal: controller.signal,
              runId,
              emit: (data) => {
                // Stream messages are checked like tool results: a wrong shape is a bug, not a message.
                const checked = messageSchema.safeParse(runId ? { ...data, run_id: runId } : data);
                if (!checked.success) throw new DiagError("E_INTERNAL", `${stream.name} produced an invalid message`);
                return out.send("message", checked.data as Record<string, unknown>);
              },
              sleep: (ms) => abortableSleep(ms, controller.signal),
            };
            await stream.run(input, ctx);
          } finally {
            clearTimeout(stopAt);
          }
        }
        await out.send("end", { reason: controller.signal.aborted ? "duration" : "done" });
      } catch (err) {
        const diag = toDiagError(err);
        await out.send("error", errorBody(diag, runId).error);
        await out.send("end", { reason: "error" });
      } finally {
        clearInterval(pinger);
        controller.abort();
      }
    },
  );
}
