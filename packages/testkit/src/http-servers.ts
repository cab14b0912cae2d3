/**
 * HTTP and HTTPS servers a test starts on loopback port 0: known answers for http_check and
 * captive_portal_check (redirect chains, a slow first byte, generate_204, an expected body, secrets in
 * response headers). Every server counts its connections, so a test can prove no packet reached it.
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createSecureServer } from "node:http2";
import { createServer as createHttpsServer } from "node:https";
import type { Socket } from "node:net";
import type { KeyCert } from "./certs.ts";

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface TestServer {
  /** e.g. http://127.0.0.1:40123 (no trailing slash). */
  url: string;
  host: string;
  port: number;
  /** TCP connections accepted so far. */
  connections(): number;
  /** "METHOD path" of every request so far. */
  requests: string[];
  close(): Promise<void>;
}

export interface TestServerOptions {
  /** Loopback address to bind (127.0.0.1 by default; any 127/8 address or ::1 works). */
  host?: string;
  /** Serve HTTPS with this key and certificate. */
  tls?: KeyCert;
  /** With tls: also speak h2 (ALPN h2 + http/1.1). */
  h2?: boolean;
}

export async function startTestServer(handler: Handler, options: TestServerOptions = {}): Promise<TestServer> {
  const host = options.host ?? "127.0.0.1";
  if (!/^127\.|^::1$/.test(host)) throw new Error(`test servers bind loopback only, not ${host}`);
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  let accepted = 0;
  const wrapped: Handler = (req, res) => {
    requests.push(`${req.method} ${req.url}`);
    handler(req, res);
  };
  const { tls, h2 } = options;
  const server = tls
    ? h2
      ? createSecureServer({ ...tls, allowHTTP1: true }, wrapped as never)
      : createHttpsServer(tls, wrapped)
    : createHttpServer(wrapped);
  server.on("connection", (socket: Socket) => {
    accepted++;
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as { port: number };
  const shown = host.includes(":") ? `[${host}]` : host;
  return {
    url: `${tls ? "https" : "http"}://${shown}:${port}`,
    host,
    port,
    connections: () => accepted,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, status: number, body = "", headers: Record<string, string | string[]> = {}): void {
  res.writeHead(status, { "content-type": "text/plain", "content-length": Buffer.byteLength(body), ...headers });
  res.end(body);
}

export const OK_BODY = "hello from the roadnerd test server";
export const NM_EXPECTED_BODY = "NetworkManager is online";

/**
 * The known answers http_check is tested against:
 * /ok (200 with secret-bearing headers), /generate_204, /expected, /empty (200, no body), /big (100 KB),
 * /redirect/<n> (a chain of n 302s ending in /ok), /to?url=&status= (one redirect anywhere),
 * /slow?ms= (headers after ms), /headers (echoes the request headers as JSON).
 */
export function diagRoutes(expectedBody = NM_EXPECTED_BODY): Handler {
  return (req, res) => {
    const url = new URL(req.url ?? "/", "http://test.invalid");
    const path = url.pathname;
    if (path === "/ok") {
      return send(res, 200, req.method === "HEAD" ? "" : OK_BODY, {
        "set-cookie": ["session=s3cr3t-cookie; HttpOnly", "theme=dark"],
        authorization: "Bearer leaked-token",
        "x-api-key": "k-123456",
        "x-visible": "plain value",
      });
    }
    if (path === "/generate_204") return send(res, 204);
    if (path === "/expected") return send(res, 200, expectedBody);
    if (path === "/empty") return send(res, 200, "");
    if (path === "/big") return send(res, 200, "x".repeat(100_000));
    if (path === "/headers") return send(res, 200, JSON.stringify(req.headers), { "content-type": "application/json" });
    const chain = /^\/redirect\/(\d{1,2})$/.exec(path);
    if (chain) {
      const n = Number(chain[1]);
      return send(res, 302, "", { location: n <= 1 ? "/ok" : `/redirect/${n - 1}` });
    }
    if (path === "/to") {
      return send(res, Number(url.searchParams.get("status") ?? 302), "", {
        location: url.searchParams.get("url") ?? "/",
      });
    }
    if (path === "/slow") {
      // Bounded: at most 10 s, and the timer dies with the socket.
      const delay = Math.min(Number(url.searchParams.get("ms") ?? 1000), 10_000);
      const timer = setTimeout(() => send(res, 200, "slow answer"), delay);
      res.once("close", () => clearTimeout(timer));
      return;
    }
    send(res, 404, "not found");
  };
}
