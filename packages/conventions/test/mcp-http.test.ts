import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FastifyInstance } from "fastify";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../src/http/http-app.ts";
import { silentLogger } from "../src/testing/silent-logger.ts";
import { demoServer } from "./fixtures/demo-server.ts";

let app: FastifyInstance;
let base: string;
let client: Client;

beforeAll(async () => {
  app = await buildApp(demoServer, { env: {}, logger: silentLogger() });
  await app.listen({ host: "127.0.0.1", port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  client = new Client({ name: "kernel-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
});
afterAll(async () => {
  await client.close();
  await app.close();
});

const errorOf = (result: Record<string, unknown>) =>
  JSON.parse((result.content as Array<{ text: string }>)[0]?.text ?? "{}").error as { code: string; message: string };

describe("MCP over Streamable HTTP (stateless)", () => {
  it("lists tools with JSON Schemas and read-only annotations", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["echo_name", "sleepy", "broken", "early"]);
    const echo = tools[0];
    expect(echo?.description).toBe("Echo a host name back, with a list to cap.");
    expect(echo?.annotations).toEqual({ readOnlyHint: true, openWorldHint: false });
    expect(echo?.inputSchema.properties).toHaveProperty("name");
    expect(echo?.inputSchema.additionalProperties).toBe(false);
    expect(echo?.outputSchema?.properties).toHaveProperty("summary");
  });

  it("calls a tool: structuredContent, and its model view as the text", async () => {
    const result = await client.callTool({ name: "echo_name", arguments: { name: "ab.example", limit: 1 } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({
      name: "ab.example",
      letters: ["a"],
      truncated: true,
      omitted: 9,
      summary: "name ab.example",
    });
    // The verdict first, then the fields the tool's view chose: the full result is sent once, as structuredContent.
    expect(result.content).toEqual([{ type: "text", text: "name ab.example\nletters=a; truncated=true" }]);
  });

  it("callers sharing one execution each get their own id and run_id on the one result, as JSON", async () => {
    const post = async (id: string | number, args: Record<string, unknown>) => {
      const res = await request(`${base}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "sleepy", arguments: args } }),
      });
      expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
      return JSON.parse(await res.body.text());
    };
    // Identical calls in flight together share one execution (and its serialized result); a run_id is the caller's own.
    const [a, b, c] = await Promise.all([
      post(7, { ms: 200 }),
      post("b", { ms: 200 }),
      post(8, { ms: 200, run_id: "r-1" }),
    ]);
    const result = {
      content: [{ type: "text", text: "waited 200" }],
      structuredContent: { waited: 200, summary: "waited 200" },
    };
    expect(a).toEqual({ jsonrpc: "2.0", id: 7, result });
    expect(b).toEqual({ jsonrpc: "2.0", id: "b", result });
    expect(c.id).toBe(8);
    expect(c.result.structuredContent).toEqual({ waited: 200, summary: "waited 200", run_id: "r-1" });
  });

  it("bad input is an isError result with our code, the same message as HTTP", async () => {
    const result = await client.callTool({ name: "echo_name", arguments: { name: "-x" } });
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toMatchObject({ code: "E_INVALID_INPUT" });
    const http = await app.inject({ method: "POST", url: "/actions/echo_name", payload: { name: "-x" } });
    expect(errorOf(result).message).toBe(http.json().error.message);
  });

  it("unknown tools and thrown errors carry our code and no internals", async () => {
    const unknown = await client.callTool({ name: "rm_rf", arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(errorOf(unknown).code).toBe("E_UNKNOWN_TOOL");
    const thrown = await client.callTool({ name: "broken", arguments: { mode: "throw" } });
    expect(errorOf(thrown)).toEqual({ code: "E_INTERNAL", message: "internal error" });
    expect(JSON.stringify(thrown)).not.toContain("shadow");
  });

  it("GET and DELETE /mcp answer 405; a rebinding Host is refused", async () => {
    expect((await request(`${base}/mcp`)).statusCode).toBe(405);
    expect((await request(`${base}/mcp`, { method: "DELETE" })).statusCode).toBe(405);
    const res = await request(`${base}/mcp`, {
      method: "POST",
      headers: {
        host: "attacker.example",
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.statusCode).toBe(403);
  });
});
