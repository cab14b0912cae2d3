/**
 * Bad input to every tool and the snapshot stream gets a 4xx with a typed error and changes nothing: no socket
 * is opened (net is watched in this process; app.inject uses none), no browser launched, no file written.
 */

import { mkdtemp, readdir, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testApp } from "@roadnerd/conventions/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { server } from "../src/server.ts";

let app: Awaited<ReturnType<typeof testApp>>;
let dir: string;
const opened: string[] = [];
let restore: () => void = () => undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "webcheck-bad-"));
  app = await testApp(server, {
    env: { OUTBOUND_ALLOW: "127.0.0.1", WEBCHECK_ARTIFACTS_DIR: join(dir, "artifacts"), EXEC_PATH: dir },
  });
  const original = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    opened.push(JSON.stringify(args[0]));
    return (original as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof original;
  restore = () => {
    net.Socket.prototype.connect = original;
  };
});

afterAll(async () => {
  restore();
  await app.close();
  await rm(dir, { recursive: true, force: true });
});

afterEach(async () => {
  expect(opened).toEqual([]);
  expect(await readdir(dir)).toEqual([]);
});

const post = (tool: string, payload: unknown) =>
  app.inject({ method: "POST", url: `/actions/${tool}`, payload: payload as Record<string, unknown> });

describe("bad input", () => {
  it.each([
    ["head", {}, 400, "E_INVALID_INPUT"],
    ["head", { url: "ftp://127.0.0.1/" }, 400, "E_INVALID_INPUT"],
    ["head", { url: "not a url" }, 400, "E_INVALID_INPUT"],
    ["head", { url: "http://127.0.0.1/", follow: "yes" }, 400, "E_INVALID_INPUT"],
    ["head", { url: "http://127.0.0.1/", method: "POST" }, 400, "E_INVALID_INPUT"],
    ["head", { url: "http://169.254.169.254/latest/meta-data/" }, 403, "E_FORBIDDEN"],
    ["head", { url: "http://127.0.0.2/" }, 403, "E_FORBIDDEN"],
    ["tls_info", {}, 400, "E_INVALID_INPUT"],
    ["tls_info", { url: "http://127.0.0.1/" }, 400, "E_INVALID_INPUT"],
    ["tls_info", { url: "https://127.0.0.1/", limit: 5 }, 400, "E_INVALID_INPUT"],
    ["tls_info", { url: "https://[::ffff:169.254.169.254]/" }, 403, "E_FORBIDDEN"],
    ["tls_info", { url: "https://127.0.0.1/", timeout_ms: 1 }, 400, "E_INVALID_INPUT"],
    ["screenshots", { limit: 0 }, 400, "E_INVALID_INPUT"],
    ["screenshots", { dir: "/etc" }, 400, "E_INVALID_INPUT"],
  ])("%s %j → %i %s", async (tool, payload, status, code) => {
    const res = await post(tool, payload);
    expect(res.statusCode).toBe(status);
    expect(res.json().error).toMatchObject({ code, message: expect.any(String) });
  });

  it.each([
    ["", 400, "E_INVALID_INPUT"],
    ["url=javascript:alert(1)", 400, "E_INVALID_INPUT"],
    ["url=file:///etc/passwd", 400, "E_INVALID_INPUT"],
    ["url=http://127.0.0.1/&width=10", 400, "E_INVALID_INPUT"],
    ["url=http://127.0.0.1/&height=99999", 400, "E_INVALID_INPUT"],
    ["url=http://127.0.0.1/&timeout_ms=5", 400, "E_INVALID_INPUT"],
    ["url=http://127.0.0.1/&full_page=1", 400, "E_INVALID_INPUT"],
    ["url=http://169.254.169.254/", 403, "E_FORBIDDEN"],
    ["url=http://0xa9fea9fe/", 403, "E_FORBIDDEN"],
    ["url=http://127.0.0.2:8080/", 403, "E_FORBIDDEN"],
  ])("snapshot ?%s → %i %s before the stream opens", async (query, status, code) => {
    const res = await app.inject({ url: `/sse/snapshot?${query}` });
    expect(res.statusCode).toBe(status);
    expect(res.json().error.code).toBe(code);
  });
});
