/**
 * The edges of the HTTP surface, on a real socket: requests Node rejects before any route still get our typed
 * body; a stalled request is dropped; CORS preflights for allowed origins; no echo of an invalid run_id;
 * failed authentication is logged; a client that stops reading a stream loses it at its duration.
 */
import { once } from "node:events";
import { type AddressInfo, connect } from "node:net";
import type { FastifyInstance } from "fastify";
import { pino } from "pino";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildHttpApp } from "../src/http/http-app.ts";
import { testRuntime } from "../src/testing/inject.ts";
import { boundsServer } from "./fixtures/bounds-server.ts";
import { demoServer } from "./fixtures/demo-server.ts";

let app: FastifyInstance;
let port: number;
const TOKEN = "a-test-token-of-24-chars";
const logged: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  const logger = pino({ level: "warn" }, { write: (line: string) => void logged.push(JSON.parse(line)) });
  app = await buildHttpApp(
    testRuntime(demoServer, { env: { AUTH_TOKEN: TOKEN, ALLOWED_ORIGINS: "https://inspector.example" }, logger }),
  );
  await app.listen({ host: "127.0.0.1", port: 0 });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(() => app?.close());

/** Write raw bytes, read the whole answer (the server closes the connection). */
async function raw(bytes: string, opts: { end?: boolean } = {}): Promise<string> {
  const socket = connect(port, "127.0.0.1");
  await once(socket, "connect");
  socket.write(bytes);
  if (opts.end) socket.end();
  let text = "";
  socket.on("data", (d) => {
    text += d.toString();
  });
  await once(socket, "close");
  return text;
}

const bodyOf = (response: string) => JSON.parse(response.slice(response.indexOf("\r\n\r\n") + 4));
const auth = { authorization: `Bearer ${TOKEN}` };

describe("requests refused before any route still get our typed body", () => {
  it("Content-Length with Transfer-Encoding → 400 E_INVALID_INPUT", async () => {
    const res = await raw(
      "POST /actions/echo_name HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    );
    expect(res).toMatch(/^HTTP\/1\.1 400 /);
    expect(bodyOf(res)).toEqual({
      error: {
        code: "E_INVALID_INPUT",
        message: "bad request: Transfer-Encoding can't be present with Content-Length",
      },
    });
  });

  it("a URL over 16 KiB → 431 E_INVALID_INPUT", async () => {
    const res = await raw(`GET /actions/${"a".repeat(17 * 1024)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    expect(res).toMatch(/^HTTP\/1\.1 431 /);
    expect(bodyOf(res).error).toEqual({
      code: "E_INVALID_INPUT",
      message: "request line or headers larger than 16 KiB",
    });
  });

  it("no Host header → 400 E_INVALID_INPUT", async () => {
    const res = await raw("GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n");
    expect(res).toMatch(/^HTTP\/1\.1 400 /);
    expect(bodyOf(res).error).toMatchObject({ code: "E_INVALID_INPUT", message: "no Host header" });
  });

  it("headers that never complete are dropped with 408 E_TIMEOUT", async () => {
    const res = await raw("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1");
    expect(res).toMatch(/^HTTP\/1\.1 408 /);
    expect(bodyOf(res).error.code).toBe("E_TIMEOUT");
  }, 15_000);

  it("a body that never completes is dropped too", async () => {
    const res = await raw(
      `POST /actions/echo_name HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"na`,
    );
    expect(res).toMatch(/^HTTP\/1\.1 408 /);
  }, 20_000);
});

describe("connections and the token", () => {
  it("an idle keep-alive connection is closed within seconds, not 72 s (a table of them locked everyone out)", async () => {
    const socket = connect(port, "127.0.0.1");
    await once(socket, "connect");
    socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n");
    await once(socket, "data");
    // Closed by the server (keepAliveTimeout 5 s); without it this waits out the test's own timeout.
    await once(socket, "close");
  }, 15_000);

  it("a refused caller gets Connection: close and a WWW-Authenticate challenge", async () => {
    const res = await request(`http://127.0.0.1:${port}/actions`);
    await res.body.dump();
    expect(res.statusCode).toBe(401);
    expect(res.headers.connection).toBe("close");
    expect(res.headers["www-authenticate"]).toMatch(/^Bearer /);
  });

  it("/healthz stays open with a query string or a trailing slash", async () => {
    for (const path of ["/healthz?probe=1", "/healthz/"]) {
      const res = await request(`http://127.0.0.1:${port}${path}`);
      await res.body.dump();
      expect(res.statusCode, path).not.toBe(401);
    }
  });

  it("a token sent in the query string is never logged", async () => {
    const res = await request(`http://127.0.0.1:${port}/actions?access_token=leaked-secret-1234&x=1`);
    await res.body.dump();
    await new Promise((r) => setTimeout(r, 1100));
    const res2 = await request(`http://127.0.0.1:${port}/actions?token=leaked-secret-5678`);
    await res2.body.dump();
    expect(JSON.stringify(logged)).not.toMatch(/leaked-secret/);
  });
});

describe("echoes and logs", () => {
  it("an invalid run_id is never echoed back", async () => {
    const runId = `<script>${"x".repeat(5000)}\u0007`;
    const res = await request(`http://127.0.0.1:${port}/actions/echo_name`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ name: "example.com", run_id: runId }),
    });
    const text = await res.body.text();
    expect(res.statusCode).toBe(400);
    expect(text).not.toContain("<script>");
    expect(JSON.parse(text).run_id).toBeUndefined();
  });

  it("a valid run_id on a failed call is echoed", async () => {
    const res = await request(`http://127.0.0.1:${port}/actions/echo_name`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ name: "-bad", run_id: "run-7" }),
    });
    expect(((await res.body.json()) as { run_id?: string }).run_id).toBe("run-7");
  });

  it("failed authentication is logged, without the token sent", async () => {
    const res = await request(`http://127.0.0.1:${port}/actions`, {
      headers: { authorization: "Bearer wrong-token-xyz" },
    });
    expect(res.statusCode).toBe(401);
    await res.body.dump();
    const line = logged.find((l) => l.msg === "authentication failed");
    expect(line).toMatchObject({ level: 40, method: "GET", url: "/actions" });
    expect(JSON.stringify(logged)).not.toContain("wrong-token-xyz");
  });
});

describe("CORS for browser MCP clients", () => {
  const preflight = (path: string, origin: string) =>
    request(`http://127.0.0.1:${port}${path}`, {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, mcp-protocol-version, authorization",
      },
    });

  it.each(["/mcp", "/actions/echo_name", "/sse/ticks"])(
    "answers a preflight for an allowed origin on %s",
    async (path) => {
      const res = await preflight(path, "https://inspector.example");
      await res.body.dump();
      expect(res.statusCode).toBe(204);
      expect(res.headers["access-control-allow-origin"]).toBe("https://inspector.example");
      expect(String(res.headers["access-control-allow-headers"])).toContain("mcp-protocol-version");
      expect(String(res.headers["access-control-allow-methods"])).toContain("POST");
    },
  );

  it("refuses a preflight from another origin", async () => {
    const res = await preflight("/mcp", "https://evil.example");
    await res.body.dump();
    expect(res.statusCode).toBe(403);
    expect(res.headers["access-control-allow-origin"]).toBeUndefined();
  });

  it("exposes the MCP headers on the real response", async () => {
    const res = await request(`http://127.0.0.1:${port}/healthz`, { headers: { origin: "https://inspector.example" } });
    await res.body.dump();
    expect(res.headers["access-control-allow-origin"]).toBe("https://inspector.example");
    expect(String(res.headers["access-control-expose-headers"])).toContain("mcp-session-id");
  });

  it("without Origin: no CORS headers but Vary: Origin; a bare OPTIONS is a 404; a preflight without its method 400", async () => {
    const plain = await request(`http://127.0.0.1:${port}/healthz`);
    await plain.body.dump();
    expect(plain.statusCode).toBe(200);
    expect(plain.headers.vary).toBe("Origin");
    expect(plain.headers["access-control-allow-origin"]).toBeUndefined();
    const bare = await request(`http://127.0.0.1:${port}/mcp`, { method: "OPTIONS", headers: auth });
    expect(bare.statusCode).toBe(404);
    expect(((await bare.body.json()) as { error: { code: string } }).error.code).toBe("E_UNKNOWN_TOOL");
    const half = await request(`http://127.0.0.1:${port}/mcp`, {
      method: "OPTIONS",
      headers: { ...auth, origin: "https://inspector.example" },
    });
    expect(half.statusCode).toBe(400);
    expect(await half.body.text()).toBe("Invalid Preflight Request");
    expect(half.headers["access-control-allow-origin"]).toBe("https://inspector.example");
  });
});

describe("a client that stops reading a stream", () => {
  it("loses it at its duration, and pings do not pile up listeners", async () => {
    const bounds = await buildHttpApp(testRuntime(boundsServer, { env: {} }));
    await bounds.listen({ host: "127.0.0.1", port: 0 });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on("warning", onWarning);
    try {
      const socket = connect((bounds.server.address() as AddressInfo).port, "127.0.0.1");
      await once(socket, "connect");
      socket.write("GET /sse/blobs?duration_ms=1500 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      // Read nothing: the server's writes back up within a few messages of 60 KiB.
      socket.pause();
      const connections = () => new Promise<number>((r) => bounds.server.getConnections((_e, n) => r(n)));
      // The server cuts it (duration 1.5 s, then a second to take `end`); a paused client cannot see that yet.
      let open = await connections();
      for (let i = 0; i < 100 && open > 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        open = await connections();
      }
      expect(open).toBe(0);
      socket.destroy();
      expect(warnings).not.toContain("MaxListenersExceededWarning");
    } finally {
      process.off("warning", onWarning);
      await bounds.close();
    }
  }, 15_000);
});
