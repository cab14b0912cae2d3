/**
 * Real forward proxies (the npm `proxy` package: absolute-form GET and CONNECT) on loopback port 0: open,
 * with Basic auth, or refusing CONNECT to port 80. Each records what it was asked, so a test can prove that
 * a denied target was never requested through it.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { createProxy } from "proxy";

export interface ForwardProxy {
  url: string;
  host: string;
  port: number;
  /** "GET http://…" or "CONNECT host:port" for every request received. */
  seen: string[];
  close(): Promise<void>;
}

export interface ForwardProxyOptions {
  /** Basic credentials the proxy requires. */
  auth?: { user: string; password: string };
  /** Answer 403 to CONNECT aimed at port 80 (as many corporate proxies do). */
  refuseConnectTo80?: boolean;
  host?: string;
  /** Default 0: any free port. */
  port?: number;
  /** Serve the proxy itself over TLS (an https:// proxy). */
  tls?: { key: string; cert: string };
}

export async function startForwardProxy(options: ForwardProxyOptions = {}): Promise<ForwardProxy> {
  const seen: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = options.tls ? createHttpsServer(options.tls) : createServer();
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  });
  // Recorded before the proxy's own handlers run.
  server.prependListener("request", (req: IncomingMessage) => seen.push(`${req.method} ${req.url}`));
  const proxy = createProxy(server);
  const auth = options.auth;
  if (auth) {
    const expected = `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString("base64")}`;
    proxy.authenticate = (req: IncomingMessage) => req.headers["proxy-authorization"] === expected;
  }
  const [onConnect] = server.listeners("connect") as Array<(req: IncomingMessage, s: Socket, head: Buffer) => void>;
  server.removeAllListeners("connect");
  server.on("connect", (req: IncomingMessage, socket: Socket, head: Buffer) => {
    seen.push(`CONNECT ${req.url}`);
    if (options.refuseConnectTo80 && /:80$/.test(req.url ?? "")) {
      socket.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    onConnect?.call(server, req, socket, head);
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `${options.tls ? "https" : "http"}://${host}:${port}`,
    host,
    port,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
