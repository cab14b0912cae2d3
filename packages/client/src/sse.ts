/** Read a RoadNerd SSE stream (ping, message, error, end) as an async iterator of parsed events. */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { type Dispatcher, request } from "undici";
import { RemoteError, remoteErrorFrom } from "./remote-error.ts";

export type SseEventName = "ping" | "progress" | "message" | "error" | "end";

export interface SseEvent {
  event: SseEventName;
  id: string | undefined;
  data: unknown;
}

/**
 * The most a stream may send without completing an event: a host that sends one endless event is cut off
 * instead of growing the reader by what it sends. Below MAX_ANSWER_BYTES (a result is a few hundred KiB at
 * most) because the parser copies an unfinished line on every chunk: 17 MiB took it ~2.5 s of CPU here.
 */
export const MAX_EVENT_BYTES = 4 * 1024 * 1024;

export async function* streamEvents(
  url: string,
  options: { headers?: Record<string, string>; signal?: AbortSignal; dispatcher?: Dispatcher } = {},
): AsyncGenerator<SseEvent> {
  const res = await request(url, {
    method: "GET",
    headers: { accept: "text/event-stream", ...options.headers },
    signal: options.signal,
    dispatcher: options.dispatcher,
  });
  if (res.statusCode !== 200) throw remoteErrorFrom(res.statusCode, await res.body.json().catch(() => null));
  const queue: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => queue.push(e) });
  const decoder = new TextDecoder();
  let pending = 0;
  try {
    for await (const chunk of res.body) {
      parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
      pending = queue.length ? 0 : pending + (chunk as Buffer).length;
      if (pending > MAX_EVENT_BYTES) {
        const message = `unexpected response: an event of more than ${MAX_EVENT_BYTES / 1024 / 1024} MiB (cut off)`;
        throw new RemoteError("E_INTERNAL", message, 502, undefined, true);
      }
      while (queue.length) {
        const e = queue.shift() as EventSourceMessage;
        const event = (e.event ?? "message") as SseEventName;
        yield { event, id: e.id, data: e.data ? JSON.parse(e.data) : null };
        if (event === "end") return;
      }
    }
  } finally {
    res.body.destroy();
  }
}
