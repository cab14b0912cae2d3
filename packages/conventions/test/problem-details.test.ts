/**
 * RFC 9457 problem details through a plain HTTP client (undici) on a real socket: asked for with
 * `Accept: application/problem+json`, every failure (bad input, unknown route, missing token) comes as
 * problem+json with our code and hint as extension members; without that Accept, the body is as before.
 */
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildHttpApp } from "../src/http/http-app.ts";
import { testRuntime } from "../src/testing/inject.ts";
import { demoServer } from "./fixtures/demo-server.ts";

const TOKEN = "a-test-token-of-24-chars";
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  app = await buildHttpApp(testRuntime(demoServer, { env: { AUTH_TOKEN: TOKEN } }));
  await app.listen({ host: "127.0.0.1", port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});
afterAll(() => app?.close());

const auth = { authorization: `Bearer ${TOKEN}` };

async function post(path: string, body: unknown, headers: Record<string, string>) {
  const res = await request(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.statusCode, type: String(res.headers["content-type"]), body: (await res.body.json()) as never };
}

describe("problem details (RFC 9457)", () => {
  it("bad input: 400 problem+json with type, title, status, detail, instance and our code, hint, run_id", async () => {
    const r = await post(
      "/actions/echo_name",
      { name: "--bad", run_id: "pd-1" },
      { ...auth, accept: "application/problem+json" },
    );
    expect(r.status).toBe(400);
    expect(r.type).toMatch(/^application\/problem\+json/);
    expect(r.body).toMatchObject({
      type: "about:blank",
      title: "Bad Request",
      status: 400,
      detail: expect.stringContaining("name"),
      instance: "/actions/echo_name",
      code: "E_INVALID_INPUT",
      hint: expect.any(String),
      run_id: "pd-1",
    });
  });

  it("an unknown route and a missing token are problem details too, with their own status", async () => {
    const accept = { accept: "application/json, application/problem+json;q=0.9" };
    const missing = await post("/nowhere", {}, { ...auth, ...accept });
    expect([missing.status, missing.type.split(";")[0]]).toEqual([404, "application/problem+json"]);
    expect(missing.body).toMatchObject({ status: 404, code: "E_UNKNOWN_TOOL", title: "Not Found" });
    const unauthorized = await post("/actions/echo_name", { name: "example.com" }, accept);
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.body).toMatchObject({
      status: 401,
      code: "E_UNAUTHORIZED",
      hint: expect.stringContaining("Bearer"),
    });
  });

  it("without that Accept (or with q=0) the body is our usual {error:{code,message,hint}}", async () => {
    for (const accept of ["application/json", "application/problem+json;q=0"]) {
      const r = await post("/actions/echo_name", { name: "--bad" }, { ...auth, accept });
      expect(r.status).toBe(400);
      expect(r.type).toMatch(/^application\/json/);
      expect(r.body).toMatchObject({ error: { code: "E_INVALID_INPUT", message: expect.any(String) } });
    }
  });
});
