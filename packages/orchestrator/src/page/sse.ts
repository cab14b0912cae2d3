/** A minimal server-sent event writer for the page's live panels (event name + one JSON data line). */
import type { ServerResponse } from "node:http";
import { SHUTDOWN_MESSAGE } from "@roadnerd/conventions/internal";

export interface PageSse {
  send(event: string, data: unknown): void;
  end(): void;
}

/**
 * `shutdown` aborts when the gateway's grace period is over (SIGTERM): a stream still open then ends with an
 * `error` event carrying E_BUSY, as every other surface answers a call it cuts, instead of a bare cut.
 */
export function openSse(res: ServerResponse, shutdown?: AbortSignal): PageSse {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  });
  // The headers go out now, so the page shows "running" before the first step ends.
  res.flushHeaders();
  const send = (event: string, data: unknown) => {
    if (!res.writableEnded && !res.destroyed) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  const end = () => {
    shutdown?.removeEventListener("abort", onShutdown);
    if (!res.writableEnded) res.end();
  };
  const onShutdown = () => {
    send("error", { code: "E_BUSY", message: SHUTDOWN_MESSAGE });
    end();
  };
  if (shutdown?.aborted) onShutdown();
  else shutdown?.addEventListener("abort", onShutdown, { once: true });
  return { send, end };
}
