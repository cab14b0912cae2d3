/**
 * SSE routes: `/sse/<tool>` for every tool (ping while it runs, one message, end) and `/sse/<stream>` for
 * defined streams (runStream). Events: ping, message (JSON), error (JSON {code,message}), end. Every stream
 * is bounded and its work (subprocesses included) is aborted when the client goes away. Event names are our
 * fixed set and ids are counters we make: @fastify/sse writes both unescaped.
 */
import type { FastifyInstance, FastifyReply } from "fastify";
import { errorBody, toDiagError } from "../errors.ts";
import { queryToInput } from "../query-input.ts";
import { runParsedStream } from "../run-stream.ts";
import { parseInput, runParsedTool } from "../run-tool.ts";
import type { Runtime } from "../runtime.ts";
import { PING_INTERVAL_MS } from "../stream.ts";
import { unknownTool } from "../suggest.ts";

type EventName = "ping" | "message" | "error" | "end";

interface Sender {
  send(event: EventName, data: unknown): Promise<boolean>;
}

/** Sends never outlive the client: a write waiting for `drain` is abandoned when the connection closes. */
function sender(reply: FastifyReply, closed: Promise<void>): Sender {
  let id = 0;
  return {
    async send(event, data) {
      if (!reply.sse?.isConnected) return false;
      id += 1;
      await Promise.race([reply.sse.send({ id: String(id), event, data }), closed]);
      return reply.sse.isConnected;
    },
  };
}

export function registerSse(app: FastifyInstance, runtime: Runtime<unknown>): void {
  const { tools, streams } = runtime.def;
  const names = [...streams.map((s) => s.name), ...tools.map((t) => t.name)];

  app.get<{ Params: { name: string }; Querystring: Record<string, unknown> }>(
    "/sse/:name",
    { sse: { kind: "manual", heartbeat: false } },
    async (request, reply) => {
      const name = request.params.name;
      const stream = runtime.stream(name);
      const tool = stream ? undefined : runtime.tool(name);
      const spec = stream ?? tool;
      if (!spec) throw unknownTool(name, names, "stream");
      // Validate before the stream starts, so a bad query is a plain 400 with the typed error body.
      const input = parseInput(spec, queryToInput(spec.inputSchema, request.query));
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
        let reason = "done";
        if (stream) {
          reason = await runParsedStream(stream, input, runtime, {
            signal: controller.signal,
            send: (message) => out.send("message", message),
          });
        } else if (tool) {
          await out.send("message", await runParsedTool(tool, input, runtime, { signal: controller.signal }));
        }
        await out.send("end", { reason });
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
