/** A minimal server-sent event writer for the page's live panels (event name + one JSON data line). */
import type { ServerResponse } from "node:http";

export interface PageSse {
  send(event: string, data: unknown): void;
  end(): void;
}

export function openSse(res: ServerResponse): PageSse {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  });
  // The headers go out now, so the page shows "running" before the first step ends.
  res.flushHeaders();
  return {
    send(event, data) {
      if (!res.writableEnded && !res.destroyed) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    end() {
      if (!res.writableEnded) res.end();
    },
  };
}
