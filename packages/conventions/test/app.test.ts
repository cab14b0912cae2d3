import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BODY_LIMIT_BYTES } from "../src/define/limits.ts";
import { buildApp } from "../src/http/http-app.ts";
import { silentLogger } from "../src/testing/silent-logger.ts";
import { demoServer, earlyWork } from "./fixtures/demo-server.ts";

let app: FastifyInstance;

beforeAll(async () => {
  app = await buildApp(demoServer, { env: {}, logger: silentLogger() });
});
afterAll(() => app.close());

const post = (tool: string, body: unknown, headers: Record<string, string> = {}) =>
  app.inject({
    method: "POST",
    url: `/actions/${tool}`,
    headers: { "content-type": "application/json", ...headers },
    payload: typeof body === "string" ? body : JSON.stringify(body),
  });

describe("HTTP contract", () => {
  it("GET /healthz says ok, name, version and what it can see", async () => {
    const res = await app.inject({ url: "/healthz" });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ ok: true, name: "roadnerd-demo", version: "0.0.1" });
    expect(body.capabilities).toHaveProperty("systemd_pid1");
    expect(body.capabilities).toHaveProperty("container");
  });

  it("GET /actions lists every tool with a one-line summary and its input schema", async () => {
    const list = (await app.inject({ url: "/actions" })).json() as Array<{
      tool: string;
      summary: string;
      input: { properties: object };
    }>;
    expect(list.map((t) => t.tool)).toEqual(["demo/echo_name", "demo/sleepy", "demo/broken", "demo/early"]);
    expect(Object.keys(list[0]?.input.properties ?? {})).toEqual(["name", "limit", "timeout_ms", "run_id"]);
  });

  it("runs a tool, caps its list, drops undeclared fields, echoes run_id, adds a summary", async () => {
    const res = await post("echo_name", { name: "example.com", limit: 3, run_id: "r-1" });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      name: "example.com",
      letters: ["e", "x", "a"],
      truncated: true,
      omitted: 8,
      summary: "name example.com",
      run_id: "r-1",
    });
  });

  it("?view=model answers the result's model view as text: the verdict first, then the view's fields", async () => {
    const res = await app.inject({
      method: "POST",
      url: "/actions/echo_name?view=model",
      headers: { "content-type": "application/json" },
      payload: JSON.stringify({ name: "example.com", limit: 3 }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    expect(res.body).toBe("name example.com\nletters=e, x, a; truncated=true");
    const other = await app.inject({ method: "POST", url: "/actions/echo_name?view=full", payload: {} });
    expect(other.statusCode).toBe(400);
    expect(other.json().error).toMatchObject({ code: "E_INVALID_INPUT", message: expect.stringContaining("model") });
  });

  it("an empty body means {}", async () => {
    const res = await app.inject({ method: "POST", url: "/actions/echo_name" });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toContain("name");
  });

  // Regression (attacker review, ADR 0063): `null` ran the tool as {}, where /mcp refuses `arguments: null`.
  it("a JSON null body is not an object: refused, not taken for {}", async () => {
    const res = await post("echo_name", "null");
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({
      code: "E_INVALID_INPUT",
      message: expect.stringContaining("JSON object"),
    });
  });

  it("GET /openapi.json is OpenAPI 3.1 with a path per tool and stream", async () => {
    const doc = (await app.inject({ url: "/openapi.json" })).json();
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(["/actions/echo_name", "/sse/echo_name", "/sse/ticks", "/healthz"]),
    );
  });
});

describe("bad input gets a typed error", () => {
  const cases: Array<[string, string, unknown, number, string]> = [
    ["wrong type", "echo_name", { name: 42 }, 400, "E_INVALID_INPUT"],
    ["missing field", "echo_name", {}, 400, "E_INVALID_INPUT"],
    ["option-looking value", "echo_name", { name: "-rf" }, 400, "E_INVALID_INPUT"],
    ["control characters", "echo_name", { name: "a\u0007b.com" }, 400, "E_INVALID_INPUT"],
    ["newline injection", "echo_name", { name: "a.com\r\nX: y" }, 400, "E_INVALID_INPUT"],
    ["unknown key", "echo_name", { name: "a.com", shell: "id" }, 400, "E_INVALID_INPUT"],
    ["array body", "echo_name", [1, 2], 400, "E_INVALID_INPUT"],
    ["timeout out of bounds", "echo_name", { name: "a.com", timeout_ms: 10_000_000 }, 400, "E_INVALID_INPUT"],
    ["bad run_id", "echo_name", { name: "a.com", run_id: "x y" }, 400, "E_INVALID_INPUT"],
    ["unknown tool", "rm_rf", {}, 404, "E_UNKNOWN_TOOL"],
  ];
  for (const [label, tool, body, status, code] of cases) {
    it(label, async () => {
      const res = await post(tool, body);
      expect(res.statusCode).toBe(status);
      expect(res.json().error.code).toBe(code);
      expect(res.json().error.message.length).toBeGreaterThan(5);
    });
  }

  it("lists valid keys and an example for an unknown key", async () => {
    const res = await post("echo_name", { nmae: "a.com" });
    const { message, hint } = res.json().error;
    expect(message).toContain("unknown key 'nmae'");
    expect(message).toContain("valid keys: name, limit, timeout_ms, run_id");
    expect(hint).toBe('example: {"name":"example.com"}');
  });

  it("suggests the closest tool name", async () => {
    expect((await post("echo_nme", {})).json().error.hint).toContain("echo_name");
  });

  it("malformed JSON", async () => {
    const res = await post("echo_name", '{"name": ');
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({
      code: "E_INVALID_INPUT",
      message: expect.stringContaining("malformed JSON"),
    });
  });

  it("a 1 MB string", async () => {
    const res = await post("echo_name", { name: "a".repeat(1024 * 1024) });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.code).toBe("E_TOO_LARGE");
    expect(BODY_LIMIT_BYTES).toBeLessThan(1024 * 1024);
  });

  it("a long string under the body limit", async () => {
    const res = await post("echo_name", { name: "a".repeat(10_000) });
    expect(res.json().error.code).toBe("E_INVALID_INPUT");
  });

  it("prototype pollution keys are refused, and the message says why", async () => {
    const res = await post("echo_name", '{"name":"a.com","__proto__":{"x":1}}');
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toBe("keys named __proto__ or constructor.prototype are refused");
  });

  it("one line per field: no duplicate, no ±2^53 noise", async () => {
    const res = await post("sleepy", { ms: 1e308 });
    expect(res.json().error.message).toBe("sleepy: ms: Too big: expected number to be <=60000");
  });

  it("a weak or unusable AUTH_TOKEN refuses to start", async () => {
    for (const token of ["aaaaaaaaaaaaaaaa", " leading-space-token", "tökén-with-ümlauts-x"]) {
      await expect(buildApp(demoServer, { env: { AUTH_TOKEN: token }, logger: silentLogger() })).rejects.toMatchObject({
        code: "E_INVALID_INPUT",
        message: expect.stringContaining("AUTH_TOKEN"),
      });
    }
  });

  it("mutating methods are E_UNSUPPORTED", async () => {
    const res = await app.inject({ method: "DELETE", url: "/actions/echo_name" });
    expect(res.statusCode).toBe(501);
    expect(res.json().error.code).toBe("E_UNSUPPORTED");
  });
});

describe("after the answer", () => {
  it("work a handler left in flight is aborted once the call has answered (regression: probes ran on)", async () => {
    const res = await post("early", {});
    expect(res.statusCode).toBe(200);
    expect(earlyWork.aborted).toBe(true);
  });
});

describe("failures", () => {
  it("a handler past its deadline is E_TIMEOUT (504)", async () => {
    const res = await post("sleepy", { ms: 3000, timeout_ms: 100 });
    expect(res.statusCode).toBe(504);
    expect(res.json().error.code).toBe("E_TIMEOUT");
  });

  it("a result outside the schema is a coded 500, not a leak", async () => {
    const res = await post("broken", { mode: "shape" });
    expect(res.statusCode).toBe(500);
    expect(res.json().error).toEqual({ code: "E_INTERNAL", message: "broken produced an invalid result" });
  });

  it("a thrown error never shows its message or stack", async () => {
    const res = await post("broken", { mode: "throw", run_id: "r9" });
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain("shadow");
    expect(res.body).not.toContain("at ");
    expect(res.json()).toEqual({ error: { code: "E_INTERNAL", message: "internal error" }, run_id: "r9" });
  });

  it("a DiagError keeps its code and status", async () => {
    const res = await post("broken", { mode: "diag" });
    expect(res.statusCode).toBe(424);
    expect(res.json().error).toEqual({ code: "E_NO_BINARY", message: "frobnicate is not installed" });
  });
});

describe("Host / Origin / token guards", () => {
  it("refuses a rebinding Host on every route", async () => {
    for (const url of ["/healthz", "/actions", "/sse/ticks"]) {
      const res = await app.inject({ url, headers: { host: "evil.example:7101" } });
      expect(res.statusCode).toBe(403);
      expect(res.json().error.code).toBe("E_FORBIDDEN");
    }
  });

  it("refuses a foreign Origin and Origin: null, accepts our own", async () => {
    expect((await app.inject({ url: "/actions", headers: { origin: "https://evil.example" } })).statusCode).toBe(403);
    expect((await app.inject({ url: "/actions", headers: { origin: "null" } })).statusCode).toBe(403);
    // inject's Host is localhost:80: a page on that very origin.
    expect((await app.inject({ url: "/actions", headers: { origin: "http://localhost" } })).statusCode).toBe(200);
    // Another loopback port is another origin (ADR 0034): the Inspector's direct mode needs ALLOWED_ORIGINS.
    const inspector = await app.inject({ url: "/actions", headers: { origin: "http://localhost:6274" } });
    expect(inspector.statusCode).toBe(403);
    expect(inspector.json().error.hint).toContain("ALLOWED_ORIGINS=http://localhost:6274");
  });

  it("refuses a page elsewhere: an IP-literal Origin that is not loopback, a cross-site request without Origin", async () => {
    expect((await app.inject({ url: "/actions", headers: { origin: "http://203.0.113.5" } })).statusCode).toBe(403);
    expect((await app.inject({ url: "/actions", headers: { origin: "http://127.0.0.1:6274" } })).statusCode).toBe(403);
    // <img src="http://127.0.0.1:7101/sse/…"> sends no Origin but Sec-Fetch-Site: cross-site.
    const img = await app.inject({ url: "/sse/ticks", headers: { "sec-fetch-site": "cross-site" } });
    expect(img.statusCode).toBe(403);
    expect(img.json().error.message).toBe("cross-site request without an Origin");
    expect((await app.inject({ url: "/actions", headers: { "sec-fetch-site": "none" } })).statusCode).toBe(200);
  });

  it("ALLOWED_HOSTS and ALLOWED_ORIGINS extend the lists", async () => {
    const other = await buildApp(demoServer, {
      env: { ALLOWED_HOSTS: "diag.lan", ALLOWED_ORIGINS: "https://inspector.example,http://127.0.0.1:8080" },
      logger: silentLogger(),
    });
    expect((await other.inject({ url: "/actions", headers: { host: "diag.lan" } })).statusCode).toBe(200);
    expect((await other.inject({ url: "/actions", headers: { origin: "https://inspector.example" } })).statusCode).toBe(
      200,
    );
    // A tool stream from a page on another loopback port: only when that origin is listed exactly.
    const stream = (origin: string) =>
      other.inject({ url: "/sse/ticks?interval_ms=50&duration_ms=200", headers: { origin } });
    expect((await stream("http://127.0.0.1:8080")).statusCode).toBe(200);
    expect((await stream("http://127.0.0.1:8081")).statusCode).toBe(403);
    await other.close();
  });

  it("AUTH_TOKEN requires the bearer token everywhere but /healthz", async () => {
    const token = "t0ken-t0ken-t0ken-1234";
    const secured = await buildApp(demoServer, { env: { AUTH_TOKEN: token }, logger: silentLogger() });
    const open = await secured.inject({ url: "/healthz" });
    expect(open.statusCode).toBe(200);
    // Without the token /healthz says only that it lives, not what it can see.
    expect(open.json()).toEqual({ ok: true, name: "roadnerd-demo", version: "0.0.1" });
    const full = await secured.inject({ url: "/healthz", headers: { authorization: `Bearer ${token}` } });
    expect(full.json()).toHaveProperty("capabilities");
    const denied = await secured.inject({ url: "/actions" });
    expect(denied.statusCode).toBe(401);
    expect(denied.json().error.code).toBe("E_UNAUTHORIZED");
    expect((await secured.inject({ url: "/actions", headers: { authorization: "Bearer wrong" } })).statusCode).toBe(
      401,
    );
    expect((await secured.inject({ url: "/actions", headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(
      200,
    );
    await secured.close();
  });
});
