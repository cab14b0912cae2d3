/**
 * SSE routes: `/sse/<tool>` for every tool (ping while it runs, `progress` when it reports how far it got, one
 * message, end) and `/sse/<stream>` for defined streams, fed by the stream hub (one producer per distinct
 * input). Events: ping, progress (JSON), message (JSON), error (JSON {code,message}), end. Every stream is bounded: by MAX_STREAMS (503 E_BUSY before it starts; shared per caller, so a caller over its share may lose a
 * stream later: `error` E_BUSY, then `end`), by
 * its duration even when the client stops reading, and by the server's shutdown (which sends `end` first).
 * Its work (subprocesses included) is aborted when the client goes away. Event names are our fixed set and
 * ids are counters we make: @fastify/sse writes both unescaped.
 */
import type { FastifyInstance, FastifyReply } from "fastify";
import { PING_INTERVAL_MS } from "../../define/stream.ts";
import { errorBody, toDiagError } from "../../errors/errors.ts";
import { unknownTool } from "../../errors/suggest.ts";
import { onSlotLost, preemptedError } from "../../runtime/call-slots.ts";
import { queryToInput, refusePoisonedQuery } from "../../runtime/query-input.ts";
import { abortableSleep } from "../../runtime/run-stream.ts";
import { parseInput, runParsedTool } from "../../runtime/run-tool.ts";
import type { Runtime } from "../../runtime/runtime.ts";
import { checkTargets } from "../../runtime/targets.ts";
import { callerKey } from "../caller-key.ts";

type EventName = "ping" | "progress" | "message" | "error" | "end";

/** How long a client that stopped reading gets to take the final `end` before its connection is cut. */
export const END_FLUSH_MS = 1000;

interface Sender {
  /** One write at a time, in order; false once the client is gone. */
  send(event: EventName, data: unknown): Promise<boolean>;
  /** A write is waiting for the client to read: a ping now would only queue behind it. */
  readonly blocked: boolean;
}

/** Writes are chained, never concurrent: a stalled client holds one pending write, not a pile of listeners. */
function sender(reply: FastifyReply, closed: Promise<void>): Sender {
  let id = 0;
  let pending = 0;
  let chain: Promise<unknown> = Promise.resolve();
  return {
    get blocked() {
      return pending > 0;
    },
    send(event, data) {
      if (!reply.sse?.isConnected) return Promise.resolve(false);
      pending += 1;
      const write = chain.then(async () => {
        if (!reply.sse?.isConnected) return false;
        id += 1;
        await Promise.race([reply.sse.send({ id: String(id), event, data }), closed]);
        return reply.sse.isConnected;
      });
      chain = write.finally(() => {
        pending -= 1;
      });
      return write;
    },
  };
}

export interface SseTracker {
  /** Open SSE responses, so a shutdown can wait for their `end`. */
  readonly open: Set<Promise<void>>;
}

export function registerSse(app: FastifyInstance, runtime: Runtime<unknown>, tracker: SseTracker): void {
  const { tools, streams } = runtime.def;
  const names = [...streams.map((s) => s.name), ...tools.map((t) => t.name)];

  const routes = ["/sse/:name", "/sse/:server/:name"];
  for (const url of routes) {
    app.get<{ Params: { name: string; server?: string }; Querystring: Record<string, unknown> }>(
      url,
      { sse: { kind: "manual", heartbeat: false } },
      async (request, reply) => {
        const { server, name: bare } = request.params;
        const name = server === undefined ? bare : `${server}/${bare}`;
        const stream = runtime.stream(name);
        const tool = stream ? undefined : runtime.tool(name);
        const spec = stream ?? tool;
        if (!spec) throw unknownTool(name, names, "stream");
        // Validate before the stream starts, so a bad query is a plain 400 with the typed error body.
        refusePoisonedQuery(request.raw.url);
        const input = parseInput(spec, queryToInput(spec.inputSchema, request.query));
        checkTargets(spec, input, runtime);
        // A tool as a stream at the call bound: 503 before any event, as on /actions.
        const caller = await callerKey(request.raw.socket, request.headers);
        if (tool) runtime.calls.check(`/sse/${name}`, caller);
        // Stream slots are shared per caller (call-slots.ts): over its share, this stream may give its slot up
        // to another caller later; it then ends with an `error` event E_BUSY.
        const preempted = new AbortController();
        const release = runtime.streams.take(`/sse/${name}`, caller, () =>
          preempted.abort(preemptedError(`/sse/${name}`, runtime.streams.max, "stream")),
        );
        let finished: () => void = () => {};
        const done = new Promise<void>((resolve) => {
          finished = resolve;
        });
        tracker.open.add(done);
        try {
          await serve(reply, input.run_id as string | undefined, preempted.signal, async (signal, out) => {
            if (stream) {
              return runtime.hub.subscribe(stream, input, { signal, send: (m) => out.send("message", m) });
            }
            if (tool) {
              // Progress is lossy: skipped while the client has not read the last event.
              const onProgress = (p: Record<string, unknown>) => {
                if (!out.blocked) void out.send("progress", p);
              };
              await out.send("message", await runParsedTool(tool, input, runtime, { signal, onProgress, caller }));
            }
            return "done";
          });
        } finally {
          release();
          tracker.open.delete(done);
          finished();
        }
        // The handler is done: @fastify/sse ends the response.
      },
    );
  }

  async function serve(
    reply: FastifyReply,
    runId: string | undefined,
    preempted: AbortSignal,
    work: (signal: AbortSignal, out: Sender) => Promise<string>,
  ): Promise<void> {
    const controller = new AbortController();
    // Its slot went to another caller: the work stops and the stream ends with E_BUSY, whatever the work makes of it.
    const { lost: lostSlot, release: stopWatchingSlot } = onSlotLost(preempted, controller);
    let pinger: NodeJS.Timeout | undefined;
    const closed = new Promise<void>((resolve) =>
      reply.sse.onClose(() => {
        clearInterval(pinger);
        controller.abort();
        resolve();
      }),
    );
    const onClosing = () => controller.abort();
    runtime.closing.addEventListener("abort", onClosing, { once: true });
    const out = sender(reply, closed);
    pinger = setInterval(() => {
      if (!out.blocked) void out.send("ping", { t: Date.now() });
    }, PING_INTERVAL_MS);
    try {
      await out.send("ping", { t: Date.now() });
      const reason = await Promise.race([work(controller.signal, out), lostSlot]);
      await finish(out, runtime.closing.aborted ? "shutdown" : reason);
    } catch (err) {
      const diag = toDiagError(err);
      await out.send("error", errorBody(diag, runId).error);
      await finish(out, runtime.closing.aborted ? "shutdown" : "error");
    } finally {
      clearInterval(pinger);
      controller.abort();
      runtime.closing.removeEventListener("abort", onClosing);
      stopWatchingSlot();
    }

    /** `end` is always last; a client that does not read it in time loses its connection instead of holding it. */
    async function finish(sender: Sender, reason: string): Promise<void> {
      const sent = sender.send("end", { reason });
      const wait = new AbortController();
      const inTime = await Promise.race([
        sent.then(() => true),
        abortableSleep(END_FLUSH_MS, wait.signal).then(() => false),
      ]);
      wait.abort();
      if (!inTime) reply.raw.destroy();
    }
  }
}
