/**
 * The pages a snapshot test serves, all on loopback: an allowed server on 127.0.0.1 (a titled page, a page whose
 * script opens a WebSocket and loads an image elsewhere, a redirect elsewhere, a page that never answers) and an
 * "outside" host on 127.0.0.2 that is not in the allowlist and counts every connection it is offered.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createServer, type Server, type Socket } from "node:net";
import { startTestServer, type TestServer } from "@roadnerd/testkit";

export interface Outside {
  host: string;
  port: number;
  /** TCP connections accepted (a WebSocket upgrade needs one first). */
  connections(): number;
  close(): Promise<void>;
}

/** A TCP listener that only counts: any byte the browser sends it would first need a connection. */
export async function startOutside(host = "127.0.0.2"): Promise<Outside> {
  let count = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    count += 1;
    sockets.add(s);
    s.on("error", () => undefined);
    s.once("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return {
    host,
    port: (server.address() as AddressInfo).port,
    connections: () => count,
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

export const PAGE_TITLE = "Router login";

/** The routes every page server here answers; `elsewhere` is the outside host:port its pages point at. */
export function pageHandler(elsewhere: string): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path === "/") {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(`<!doctype html><title>${PAGE_TITLE}</title><body style="background:#08c"><h1>Hello</h1></body>`);
    } else if (path === "/leaky") {
      // A WebSocket and an image to a host outside the allowlist; a slow image here holds the load event
      // long enough for both attempts to reach the proxy.
      res.writeHead(200, { "content-type": "text/html" });
      res.end(
        `<!doctype html><title>leaky</title><script>
          const ws = new WebSocket("ws://${elsewhere}/socket");
          ws.onerror = () => { document.title = "ws refused"; };
        </script><img src="http://${elsewhere}/pixel.png"><img src="/slow.png">`,
      );
    } else if (path === "/slow.png") {
      setTimeout(() => res.writeHead(404).end(), 600);
    } else if (path === "/away") {
      res.writeHead(302, { location: `http://${elsewhere}/login` }).end();
    } else if (path === "/hang") {
      // Never answers: the test server's close() destroys the socket.
    } else {
      res.writeHead(404).end();
    }
  };
}

export function startPages(outside: { host: string; port: number }): Promise<TestServer> {
  return startTestServer(pageHandler(`${outside.host}:${outside.port}`));
}
