/**
 * Bad input to every tool and stream gets a 4xx with a typed error, and changes nothing: no process is spawned
 * (EXEC_PATH holds only a fake `ip` that records each run) and no socket is opened (net and dgram are watched
 * in this process; app.inject itself uses no socket).
 */
import dgram from "node:dgram";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testApp } from "@roadnerd/conventions/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { server } from "../src/server.ts";
import { PUBLIC_DEFAULT_HOSTS } from "./helpers/loopback-world.ts";

let app: Awaited<ReturnType<typeof testApp>>;
let dir: string;
const opened: string[] = [];
const restore: Array<() => void> = [];

function watch<T extends object>(proto: T, method: keyof T & string, label: string): void {
  const original = proto[method] as unknown as (...args: unknown[]) => unknown;
  (proto as Record<string, unknown>)[method] = function (this: unknown, ...args: unknown[]) {
    opened.push(`${label} ${JSON.stringify(args[0])}`);
    return original.apply(this, args);
  };
  restore.push(() => {
    (proto as Record<string, unknown>)[method] = original;
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rn-bad-input-"));
  await writeFile(join(dir, "ip"), `#!/bin/sh\necho "$@" >> "${dir}/ran"\necho '[]'\n`);
  await chmod(join(dir, "ip"), 0o755);
  app = await testApp(server, {
    env: {
      EXEC_PATH: dir,
      RESOLV_CONF: join(dir, "no-resolv.conf"),
      OUTBOUND_ALLOW: "127.0.0.0/8",
      // The captive defaults are public names: deny them by name, which refuses before any lookup.
      OUTBOUND_DENY: PUBLIC_DEFAULT_HOSTS.join(","),
    },
  });
  watch(net.Socket.prototype, "connect", "tcp");
  watch(dgram.Socket.prototype, "send", "udp");
});

afterAll(async () => {
  for (const undo of restore) undo();
  await app.close();
  await rm(dir, { recursive: true, force: true });
});

afterEach(async () => {
  // Nothing spawned, nothing dialled, whatever the input was.
  const ran = await readFile(join(dir, "ran"), "utf8").catch(() => "");
  expect(ran).toBe("");
  expect(opened).toEqual([]);
});

const MB = "x".repeat(1024 * 1024);
const common: Array<[string, unknown]> = [
  ["an array body", [1, 2]],
  ["a string body", "just text"],
  ["an unknown key", { shell: "id" }],
  ["timeout_ms as a string", { timeout_ms: "2000" }],
  ["timeout_ms out of bounds", { timeout_ms: 10_000_000 }],
  ["a run_id with spaces", { run_id: "a b" }],
  ["a 1 MB string", { run_id: MB }],
  ["control characters", { run_id: "a\u0000b" }],
];

const perTool: Record<string, Array<[string, unknown]>> = {
  iface_info: [
    ["limit 0", { limit: 0 }],
    ["limit as text", { limit: "all" }],
  ],
  route_info: [["limit over the max", { limit: 100_000 }]],
  dns_resolve: [
    ["no qname", {}],
    ["qname as a number", { qname: 42 }],
    ["qname starting with -", { qname: "-oProxyCommand=id" }],
    ["qname with a newline", { qname: "example.com\nevil" }],
    ["type ANY", { qname: "example.com", type: "ANY" }],
    ["server not an IP", { qname: "example.com", server: "resolver.example" }],
    ["server starting with -", { qname: "example.com", server: "-p53" }],
  ],
  http_check: [
    ["no url", {}],
    ["a file: URL", { url: "file:///etc/passwd" }],
    ["a relative URL", { url: "/etc/passwd" }],
    ["a header with a line break", { url: "http://127.0.0.1/", headers: { "x-a": "1\r\nHost: evil" } }],
    ["headers as a list", { url: "http://127.0.0.1/", headers: ["a"] }],
  ],
  tcp_port_check: [
    ["no port", { host: "127.0.0.1" }],
    ["port 0", { host: "127.0.0.1", port: 0 }],
    ["port 70000", { host: "127.0.0.1", port: 70_000 }],
    ["port as text", { host: "127.0.0.1", port: "22" }],
    ["host starting with -", { host: "-oProxyCommand=id", port: 22 }],
    ["host with a space", { host: "a b", port: 22 }],
  ],
  captive_portal_check: [
    ["test_url not http", { test_url: "gopher://127.0.0.1/" }],
    ["capport_url not a URL", { capport_url: "nope" }],
  ],
};

describe("every network tool refuses bad input with E_INVALID_INPUT and does nothing", () => {
  for (const tool of server.tools) {
    const cases = [...common, ...(perTool[tool.name] ?? [])];
    it.each(cases)(`${tool.name}: %s`, async (_label, body) => {
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

  it("malformed JSON, an unknown tool and a mutating method are typed too", async () => {
    const malformed = await app.inject({
      method: "POST",
      url: "/actions/dns_resolve",
      headers: { "content-type": "application/json" },
      payload: '{"qname": "exa',
    });
    expect([malformed.statusCode, malformed.json().error.code]).toEqual([400, "E_INVALID_INPUT"]);
    const unknown = await app.inject({ method: "POST", url: "/actions/dns_reslove", payload: {} });
    expect([unknown.statusCode, unknown.json().error.code]).toEqual([404, "E_UNKNOWN_TOOL"]);
    expect(unknown.json().error.hint).toContain("dns_resolve");
    const mutating = await app.inject({ method: "DELETE", url: "/actions/route_info" });
    expect([mutating.statusCode, mutating.json().error.code]).toEqual([501, "E_UNSUPPORTED"]);
  });

  it("the same refusals hold for /sse/<tool> and connectivity_watch, before any event", async () => {
    for (const url of [
      "/sse/tcp_port_check?host=-x&port=22",
      "/sse/dns_resolve?qname=example.com&type=ANY",
      "/sse/connectivity_watch?interval_ms=1",
      "/sse/connectivity_watch?url=file:///etc/passwd",
      "/sse/connectivity_watch?duration_ms=999999999",
    ]) {
      const res = await app.inject({ method: "GET", url });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error.code).toBe("E_INVALID_INPUT");
    }
  });
});

describe("a denied target is refused before any packet", () => {
  it.each([
    ["tcp_port_check", { host: "192.0.2.1", port: 80 }],
    ["http_check", { url: "http://169.254.169.254/latest/meta-data/" }],
    ["http_check", { url: "http://[::ffff:169.254.169.254]/" }],
    ["http_check", { url: "http://0x0a000001/" }],
    ["dns_resolve", { qname: "example.com", server: "192.0.2.53" }],
    ["captive_portal_check", { test_url: "http://10.0.0.1/" }],
  ])("%s %j → 403 E_FORBIDDEN", async (tool, body) => {
    const res = await app.inject({
      method: "POST",
      url: `/actions/${tool}`,
      headers: { "content-type": "application/json" },
      payload: JSON.stringify(body),
    });
    if (tool === "captive_portal_check") {
      // The captive check reports a denied probe inside its result rather than failing the whole check.
      expect([200, 403]).toContain(res.statusCode);
      expect(res.body).toContain("E_FORBIDDEN");
      return;
    }
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe("E_FORBIDDEN");
  });
});
