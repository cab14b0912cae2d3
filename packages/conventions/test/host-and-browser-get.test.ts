/**
 * Regressions on a real socket: `Host: [::1].evil.com` was read as ::1 and duplicate Host headers were accepted
 * (Node keeps the first); a GET /sse/<tool> ran a tool for any browser navigation, frame or <img> whose request
 * carried no cross-site mark (a headless browser told to open the URL, a same-site page).
 */
import { once } from "node:events";
import { type AddressInfo, connect } from "node:net";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildHttpApp } from "../src/http/http-app.ts";
import { testRuntime } from "../src/testing/inject.ts";
import { demoServer } from "./fixtures/demo-server.ts";

let app: FastifyInstance;
let port: number;

beforeAll(async () => {
  app = await buildHttpApp(testRuntime(demoServer));
  await app.listen({ host: "127.0.0.1", port: 0 });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(() => app?.close());

async function raw(head: string): Promise<{ status: number; body: string }> {
  const socket = connect(port, "127.0.0.1");
  await once(socket, "connect");
  socket.write(`${head}Connection: close\r\n\r\n`);
  let text = "";
  socket.on("data", (d) => {
    text += d.toString();
  });
  await once(socket, "close");
  return { status: Number(text.slice(9, 12)), body: text.slice(text.indexOf("\r\n\r\n") + 4) };
}

describe("Host header hardening", () => {
  it.each(["[::1].evil.com", "[::1]evil.com:80", "127.0.0.1@evil.com", "evil.com/x"])(
    "Host: %s → 403",
    async (host) => {
      const res = await raw(`GET /actions HTTP/1.1\r\nHost: ${host}\r\n`);
      expect(res.status).toBe(403);
      expect(res.body).toContain("E_FORBIDDEN");
    },
  );

  it("two Host headers → 400, whichever comes first", async () => {
    for (const [a, b] of [
      ["127.0.0.1", "evil.com"],
      ["evil.com", "127.0.0.1"],
    ]) {
      const res = await raw(`GET /actions HTTP/1.1\r\nHost: ${a}\r\nHost: ${b}\r\n`);
      expect(res.status).toBe(400);
      expect(res.body).toContain("more than one Host header");
    }
  });

  it("the usual forms still pass", async () => {
    for (const host of ["127.0.0.1", `127.0.0.1:${port}`, `[::1]:${port}`, "localhost", `localhost:${port}`]) {
      expect((await raw(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\n`)).status).toBe(200);
    }
  });
});

describe("a GET that runs a tool, from a browser", () => {
  const sse = (extra: string) =>
    raw(`GET /sse/echo_name?name=example.com HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${extra}`);

  it.each([
    [
      "a top-level navigation (a headless browser told to open the URL)",
      "Sec-Fetch-Site: none\r\nSec-Fetch-Mode: navigate\r\nSec-Fetch-Dest: document\r\n",
    ],
    ["a same-origin frame", "Sec-Fetch-Site: same-origin\r\nSec-Fetch-Mode: navigate\r\nSec-Fetch-Dest: iframe\r\n"],
    [
      "an <img> of a same-site page",
      "Sec-Fetch-Site: same-site\r\nSec-Fetch-Mode: no-cors\r\nSec-Fetch-Dest: image\r\n",
    ],
    ["a no-cors fetch", "Sec-Fetch-Site: same-origin\r\nSec-Fetch-Mode: no-cors\r\nSec-Fetch-Dest: empty\r\n"],
  ])("%s is refused", async (_, headers) => {
    const res = await sse(headers);
    expect(res.status).toBe(403);
    expect(res.body).toContain("E_FORBIDDEN");
  });

  // Regression (attacker review): any loopback origin could open tool streams, so a page served on another
  // loopback port (a dev server, another user's web app) ran tools with an EventSource or fetch.
  it.each([
    [
      "an EventSource from a page on another loopback port",
      "Origin: http://127.0.0.1:8080\r\nSec-Fetch-Site: same-site\r\n",
    ],
    ["the same through localhost", "Origin: http://localhost:3000\r\nSec-Fetch-Site: cross-site\r\n"],
    ["a fetch with no Sec-Fetch-Site from another loopback port", "Origin: http://127.0.0.1:8080\r\n"],
    ["an origin with no port (80)", "Origin: http://localhost\r\n"],
  ])("%s is refused", async (_, headers) => {
    const res = await sse(`${headers}Sec-Fetch-Mode: cors\r\nSec-Fetch-Dest: empty\r\n`);
    expect(res.status).toBe(403);
    expect(res.body).toContain("Origin not allowed");
  });

  it("an EventSource from an allowed origin, and curl, still stream", async () => {
    const es = await sse(
      `Origin: http://localhost:${port}\r\nSec-Fetch-Site: same-site\r\nSec-Fetch-Mode: cors\r\nSec-Fetch-Dest: empty\r\nAccept: text/event-stream\r\n`,
    );
    expect(es.status).toBe(200);
    expect(es.body).toContain("event: end");
    const curl = await sse("");
    expect(curl.status).toBe(200);
  });
});
