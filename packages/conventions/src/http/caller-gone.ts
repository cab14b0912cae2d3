import type { FastifyReply } from "fastify";

/** Aborts when the caller hangs up before its answer is written: its work (subprocesses included) is cancelled. */
export function callerGone(reply: FastifyReply): AbortSignal {
  const gone = new AbortController();
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) gone.abort();
  });
  return gone.signal;
}
