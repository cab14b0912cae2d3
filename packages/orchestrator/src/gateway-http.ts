/**
 * The gateway over Streamable HTTP at /mcp, stateless (a fresh MCP server per POST, one shared attach
 * layer), on 127.0.0.1 only, with a Host check against DNS rebinding. GET /healthz for `roadnerd up`.
 */
import { createServer, type Server as HttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createGatewayServer, type GatewayOptions } from "./gateway.ts";

const MAX_BODY = 1 << 20;

export interface GatewayHttp {
  url: string;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error("body too large"));
        req.destroy();
      } else chunks.push(c);
    });
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch {
        reject(new Error("body is not JSON"));
      }
    });
    req.on("error", reject);
  });
}

export async function serveGatewayHttp(options: GatewayOptions, port = 0): Promise<GatewayHttp> {
  let allowedHosts: Set<string> = new Set();
  const http: HttpServer = createServer((req, res) => {
    // DNS rebinding: only our own loopback names.
    if (!allowedHosts.has((req.headers.host ?? "").toLowerCase())) {
      send(res, 403, { error: { code: "E_FORBIDDEN", message: "Host not allowed" } });
      return;
    }
    // A browser page elsewhere must not drive the gateway: only our own origin, or none (non-browser clients).
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedHosts.has(origin.toLowerCase().replace(/^https?:\/\//, ""))) {
      send(res, 403, { error: { code: "E_FORBIDDEN", message: "Origin not allowed" } });
      return;
    }
    const path = (req.url ?? "").split("?")[0];
    if (path === "/healthz" && req.method === "GET") {
      send(res, 200, { ok: true, name: "roadnerd", version: "gateway" });
      return;
    }
    if (path !== "/mcp") {
      send(res, 404, { error: { code: "E_UNKNOWN_TOOL", message: "only /mcp and /healthz here" } });
      return;
    }
    if (req.method !== "POST") {
      send(res, 405, { jsonrpc: "2.0", error: { code: -32000, message: "stateless server: POST only" }, id: null });
      return;
    }
    void (async () => {
      let body: unknown;
      try {
        body = await readBody(req);
      } catch (err) {
        send(res, 400, { jsonrpc: "2.0", error: { code: -32700, message: (err as Error).message }, id: null });
        return;
      }
      const server = createGatewayServer(options);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on("close", () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    })().catch(() => {
      if (!res.headersSent)
        send(res, 500, { jsonrpc: "2.0", error: { code: -32603, message: "internal error" }, id: null });
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, "127.0.0.1", () => resolve());
  });
  const bound = (http.address() as AddressInfo).port;
  allowedHosts = new Set([`127.0.0.1:${bound}`, `localhost:${bound}`]);
  return {
    url: `http://127.0.0.1:${bound}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
