/**
 * Bad input to every tool gets a 400 E_INVALID_INPUT naming the tool with a valid example, and does nothing:
 * no socket is opened (net.Socket.connect is watched: resolved_status would connect to the varlink socket) and
 * the root it reads is left exactly as it was.
 */
import { readdirSync, statSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { testApp } from "@roadnerd/conventions/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { server } from "../src/server.ts";
import { type BuiltRoot, buildRoot } from "./helpers/build-root.ts";
import { layouts } from "./helpers/layouts.ts";

let app: Awaited<ReturnType<typeof testApp>>;
let root: BuiltRoot;
let before: string;
const connects: string[] = [];
const originalConnect = net.Socket.prototype.connect;

/** Every path in the root with its size and mtime: what "nothing changed" means here. */
function snapshot(dir: string, prefix = ""): string {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .map((e) => {
      const rel = join(prefix, e.name);
      const st = statSync(join(dir, rel), { throwIfNoEntry: false });
      const line = `${rel} ${st?.size ?? "-"} ${st?.mtimeMs ?? "-"}`;
      return e.isDirectory() ? `${line}\n${snapshot(dir, rel)}` : line;
    })
    .join("\n");
}

beforeAll(async () => {
  root = await buildRoot(layouts.resolvedStub);
  before = snapshot(root.dir);
  app = await testApp(server, { env: root.env });
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    connects.push(JSON.stringify(args[0]));
    return (originalConnect as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof net.Socket.prototype.connect;
});

afterAll(async () => {
  net.Socket.prototype.connect = originalConnect;
  await app.close();
  await root.remove();
});

afterEach(() => {
  expect(connects).toEqual([]);
  expect(snapshot(root.dir)).toBe(before);
});

const common: Array<[string, unknown]> = [
  ["an array body", [1, 2]],
  ["a string body", "just text"],
  ["an unknown key", { path: "/etc/shadow" }],
  ["root as an input", { DNS_CONFIG_ROOT: "/" }],
  ["timeout_ms as a string", { timeout_ms: "2000" }],
  ["timeout_ms out of bounds", { timeout_ms: 10_000_000 }],
  ["a run_id with spaces", { run_id: "a b" }],
  ["control characters", { run_id: "a\u0000b" }],
  ["a 1 MB string", { run_id: "x".repeat(1024 * 1024) }],
];

const perTool: Record<string, Array<[string, unknown]>> = {
  dns_config_get: [
    ["limit 0", { limit: 0 }],
    ["limit as text", { limit: "all" }],
    ["limit over the max", { limit: 100_000 }],
    ["limit fractional", { limit: 1.5 }],
  ],
  resolved_status: [
    ["a limit it does not take", { limit: 5 }],
    ["null body key", { running: null }],
  ],
};

describe("every dns-config tool refuses bad input with E_INVALID_INPUT and does nothing", () => {
  for (const tool of server.tools) {
    it.each([...common, ...(perTool[tool.name] ?? [])])(`${tool.name}: %s`, async (_label, body) => {
      const res = await app.inject({
        method: "POST",
        url: `/actions/${tool.name}`,
        headers: { "content-type": "application/json" },
        payload: JSON.stringify(body),
      });
      const error = res.json().error;
      // Over the body limit the refusal comes before parsing: 413 E_TOO_LARGE (ADR 0048).
      if (JSON.stringify(body).length > 64 * 1024) {
        expect(res.statusCode).toBe(413);
        expect(error.code).toBe("E_TOO_LARGE");
        expect(error.message).toMatch(/^request body larger than \d+ bytes$/);
        return;
      }
      expect(res.statusCode).toBe(400);
      expect(error.code).toBe("E_INVALID_INPUT");
      expect(error.message).toMatch(new RegExp(`^${tool.name}: `));
      expect(error.hint).toMatch(/^example: \{/);
    });
  }

  it("has bad-input cases for every tool", () => {
    expect(Object.keys(perTool).sort()).toEqual(server.tools.map((t) => t.name).sort());
  });

  it("over SSE (dns_config_watch too) and for a mutating method, the same refusals", async () => {
    for (const url of [
      "/sse/dns_config_get?limit=0",
      "/sse/resolved_status?path=/etc/shadow",
      "/sse/dns_config_watch?interval_ms=1",
      "/sse/dns_config_watch?interval_ms=soon",
      "/sse/dns_config_watch?duration_ms=999999999",
      "/sse/dns_config_watch?path=/etc/shadow",
    ]) {
      const res = await app.inject({ method: "GET", url });
      expect([res.statusCode, res.json().error.code], url).toEqual([400, "E_INVALID_INPUT"]);
    }
    const mutating = await app.inject({ method: "DELETE", url: "/actions/dns_config_get" });
    expect([mutating.statusCode, mutating.json().error.code]).toEqual([501, "E_UNSUPPORTED"]);
  });
});
