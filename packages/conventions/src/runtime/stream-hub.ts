/**
 * One producer per distinct stream input: every open stream that asked for the same thing (run_id and
 * duration aside) is fed by the same rounds, so 100 clients watching connectivity cost one watcher, not 100.
 * Each subscriber keeps its own duration and run_id; a slow subscriber gets the latest message, never a
 * growing queue, and never slows the others. The producer stops when its last subscriber leaves.
 */

import { type AnyStream, DEFAULT_STREAM_DURATION_MS, type MessageOf } from "../define/stream.ts";
import { runParsedStream, type StreamEnd } from "./run-stream.ts";
import type { Runtime } from "./runtime.ts";
import { callKey } from "./shared-calls.ts";

type Message = Record<string, unknown>;

export interface Subscription<S extends AnyStream> {
  send(message: MessageOf<S>): Promise<boolean>;
  signal?: AbortSignal | undefined;
}

export interface StreamHub {
  /** Resolves with why this subscriber's stream ended; rejects with the producer's error. */
  subscribe<S extends AnyStream>(stream: S, input: Record<string, unknown>, sub: Subscription<S>): Promise<StreamEnd>;
  stats(): { producers: number; subscribers: number };
}

interface Subscriber {
  send(message: Message): Promise<boolean>;
  runId: string | undefined;
  busy: boolean;
  next: Message | undefined;
  /** The producer ended: finish once what is in flight has been sent. */
  ending: StreamEnd | undefined;
  finish(end: StreamEnd | Error): void;
}

interface Producer {
  subs: Set<Subscriber>;
  controller: AbortController;
}

export function createStreamHub(runtime: () => Runtime<unknown>): StreamHub {
  const producers = new Map<string, Producer>();

  function pump(sub: Subscriber, message: Message): void {
    sub.busy = true;
    sub.send(message).then(
      (more) => {
        sub.busy = false;
        if (!more) return sub.finish("closed");
        const next = sub.next;
        sub.next = undefined;
        if (next) return pump(sub, next);
        if (sub.ending) sub.finish(sub.ending);
      },
      () => sub.finish("closed"),
    );
  }

  function deliver(sub: Subscriber, message: Message): void {
    const stamped = sub.runId ? { ...message, run_id: sub.runId } : message;
    // A subscriber still writing the last message gets only the newest one next: no queue grows.
    if (sub.busy) sub.next = stamped;
    else pump(sub, stamped);
  }

  /**
   * Run the producer on the input its subscribers share (no run_id, no duration); called once its first
   * subscriber is in, so its first message has someone to reach.
   */
  function run(key: string, producer: Producer, stream: AnyStream, shared: Record<string, unknown>): void {
    runParsedStream(stream, shared, runtime(), {
      signal: producer.controller.signal,
      unbounded: true,
      send: async (message) => {
        for (const sub of [...producer.subs]) deliver(sub, message as Message);
        return producer.subs.size > 0;
      },
    })
      .then(
        (end) => {
          for (const sub of [...producer.subs]) {
            sub.ending = end === "closed" ? "closed" : "done";
            if (!sub.busy) sub.finish(sub.ending);
          }
        },
        (err: unknown) => {
          for (const sub of [...producer.subs]) sub.finish(err instanceof Error ? err : new Error(String(err)));
        },
      )
      .finally(() => {
        if (producers.get(key) === producer) producers.delete(key);
      });
  }

  return {
    subscribe(stream, input, options) {
      if (stream.shared === false) {
        return runParsedStream(stream, input, runtime(), { send: options.send, signal: options.signal });
      }
      const { duration_ms: _d, run_id: _r, ...shared } = input;
      const key = callKey(stream.name, shared);
      const existing = producers.get(key);
      const producer: Producer = existing ?? { subs: new Set(), controller: new AbortController() };
      if (!existing) producers.set(key, producer);
      const duration = (input.duration_ms as number | undefined) ?? DEFAULT_STREAM_DURATION_MS;
      return new Promise<StreamEnd>((resolve, reject) => {
        let finished = false;
        const sub: Subscriber = {
          send: options.send as (m: Message) => Promise<boolean>,
          runId: input.run_id as string | undefined,
          busy: false,
          next: undefined,
          ending: undefined,
          finish(end) {
            if (finished) return;
            finished = true;
            clearTimeout(timer);
            options.signal?.removeEventListener("abort", onGone);
            producer.subs.delete(sub);
            // The last subscriber gone: the producer stops (its work, processes included, is aborted).
            if (producer.subs.size === 0) {
              if (producers.get(key) === producer) producers.delete(key);
              producer.controller.abort();
            }
            if (end instanceof Error) reject(end);
            else resolve(end);
          },
        };
        const timer = setTimeout(() => sub.finish("duration"), duration);
        const onGone = () => sub.finish("closed");
        producer.subs.add(sub);
        if (options.signal?.aborted) return onGone();
        options.signal?.addEventListener("abort", onGone, { once: true });
        if (!existing) run(key, producer, stream, shared);
      });
    },
    stats() {
      let subscribers = 0;
      for (const p of producers.values()) subscribers += p.subs.size;
      return { producers: producers.size, subscribers };
    },
  };
}
