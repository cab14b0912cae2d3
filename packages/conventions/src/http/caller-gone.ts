import type { FastifyReply } from "fastify";

/**
 * Aborts when the caller hangs up before its answer is written: its work (subprocesses included) is cancelled.
 * Already aborted when it hung up before the handler ran (during the peer check or the body): such a call
 * must not run on to its deadline holding a slot.
 */
export function callerGone(reply: FastifyReply): AbortSignal {
  if (reply.raw.closed && !reply.raw.writableFinished) return AbortSignal.abort();
  const gone = new AbortController();
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) gone.abort();
  });
  return gone.signal;
}
