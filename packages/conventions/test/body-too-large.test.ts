/**
 * Regression (issue 18, A11b): a 100 MB body to a server was answered 400 E_INVALID_INPUT and the connection
 * kept alive, so Node read (and dropped) all of it. Now 413 E_TOO_LARGE on /actions/<tool> and /mcp, at once
 * when Content-Length says so and as soon as chunks pass the limit without it, then the connection is closed.
 */
import type { AddressInfo } from "node:net";
import { type Oversized, sendOversized } from "@roadnerd/testkit";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BODY_LIMIT_BYTES } from "../src/define/limits.ts";
import { buildHttpApp } from "../src/http/http-app.ts";
import { testRuntime } from "../src/testing/inject.ts";
import { demoServer } from "./fixtures/demo-server.ts";

let app: FastifyInstance;
let port: number;

beforeAll(async () => {
  app = await buildHttpApp(testRuntime(demoServer, { env: {} }));
  await app.listen({ host: "127.0.0.1", port: 0 });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await app?.close();
});

/** 413 E_TOO_LARGE, and the connection closed while the client still has the rest of its body to send. */
async function expectCutEarly(answer: Oversized): Promise<void> {
  expect(answer.head).toMatch(/^HTTP\/1\.1 413 /);
  expect(answer.head.toLowerCase()).toContain("connection: close");
  expect(await answer.closed).toContain('"E_TOO_LARGE"');
}

/** 100 MB announced, twice the limit sent; or twice the limit in chunks, with no end. */
const ANNOUNCED = { contentLength: 100 * 1024 * 1024, bytes: 2 * BODY_LIMIT_BYTES };
const CHUNKED = { chunked: true as const, bytes: 2 * BODY_LIMIT_BYTES };

describe("a body over the limit", () => {
  for (const path of ["/actions/echo_name", "/mcp"]) {
    it(`${path}: 100 MB announced by Content-Length is refused before it is read`, async () => {
      await expectCutEarly(await sendOversized(port, path, ANNOUNCED));
    });

    it(`${path}: chunked, without Content-Length, is cut as soon as it passes the limit`, async () => {
      await expectCutEarly(await sendOversized(port, path, CHUNKED));
    });
  }

  it("the server still answers the next client", async () => {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(res.status).toBe(200);
  });
});
