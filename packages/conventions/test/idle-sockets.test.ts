/**
 * Regression: idle sockets took every server down. 770 connections that never sent a byte (or half a request)
 * and never closed kept /healthz unreachable for as long as the attacker liked: the client-error handler
 * answered 408 with socket.end() and never destroyed the socket, so each sat in FIN-WAIT-2 holding its slot of
 * the connection cap. Here a cap of 64 and 200 such peers (allowHalfOpen, never reading, never closing): the
 * server must answer /healthz again within its headers timeout, and its connection count fall to what it was.
 */
import { once } from "node:events";
import { type AddressInfo, connect, type Socket } from "node:net";
import { scaledMs } from "@roadnerd/testkit";
import type { FastifyInstance } from "fastify";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEADERS_TIMEOUT_MS } from "../src/http/connection-bounds.ts";
import { buildHttpApp } from "../src/http/http-app.ts";
import { testRuntime } from "../src/testing/inject.ts";
import { demoServer } from "./fixtures/demo-server.ts";

const CAP = 64;
const PEERS = 200;
let app: FastifyInstance;
let port: number;
const peers: Socket[] = [];

beforeAll(async () => {
  app = await buildHttpApp(testRuntime(demoServer));
  // The production cap is 768; a smaller one makes the same attack with fewer sockets.
  app.server.maxConnections = CAP;
  await app.listen({ host: "127.0.0.1", port: 0 });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const s of peers) s.destroy();
  await app?.close();
});

const connections = () =>
  new Promise<number>((resolve, reject) => app.server.getConnections((e, n) => (e ? reject(e) : resolve(n))));

/** A peer that keeps its side open whatever the server does, and never reads what it is sent. */
async function idlePeer(bytes: string): Promise<void> {
  const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true });
  socket.on("error", () => {});
  peers.push(socket);
  await once(socket, "connect");
  socket.pause();
  if (bytes) socket.write(bytes);
}

async function healthzWithin(ms: number): Promise<number> {
  const started = performance.now();
  const deadline = started + ms;
  while (performance.now() < deadline) {
    try {
      const res = await request(`http://127.0.0.1:${port}/healthz`, {
        headersTimeout: 1000,
        bodyTimeout: 1000,
        reset: true,
      });
      await res.body.text();
      if (res.statusCode === 200) return performance.now() - started;
    } catch {
      // Refused or cut while the slots are taken: try again.
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`/healthz did not answer within ${ms} ms`);
}

describe("idle and half-open connections cost at most their timeout", () => {
  it(`${PEERS} silent or half-request peers over a cap of ${CAP}: /healthz answers again, the count returns`, async () => {
    const baseline = await connections();
    await Promise.all(
      Array.from({ length: PEERS }, (_, i) =>
        idlePeer(i % 2 === 0 ? "" : "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1"),
      ),
    );
    // The attack holds every slot at first (the cap closes the rest at once).
    expect(await connections()).toBeLessThanOrEqual(CAP + baseline);
    // Within the headers timeout (plus the 1 s check and the flush), whatever the peers do.
    await healthzWithin(scaledMs(HEADERS_TIMEOUT_MS + 4_000));
    const deadline = performance.now() + scaledMs(3_000);
    while ((await connections()) > baseline && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect(await connections()).toBe(baseline);
  }, 60_000);
});
