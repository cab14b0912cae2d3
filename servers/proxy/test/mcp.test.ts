/**
 * The proxy server as MCP clients see it (the official SDK client over Streamable HTTP and over stdio), started
 * from its bin in an environment of its own: its proxy variables are the ones proxy_env_status reports, with
 * credentials masked in every result and every log line. All targets are on loopback.
 */
import type { ServerResponse } from "node:http";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { generateTestCerts, openMcp, startTestServer, type TestCerts, type TestServer } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ForwardProxy, startForwardProxy } from "./helpers/forward-proxy.ts";

const TOOLS = ["proxy_env_status", "proxy_connectivity_test", "sso_probe", "openid_config"];
const OPEN_WORLD = ["proxy_connectivity_test", "sso_probe", "openid_config"];

let certs: TestCerts;
let web: TestServer;
let issuer: TestServer;
let proxy: ForwardProxy;
let env: Record<string, string>;

beforeAll(async () => {
  certs = await generateTestCerts();
  proxy = await startForwardProxy();
  web = await startTestServer((req, res: ServerResponse) => {
    if (req.url === "/app")
      return void res.writeHead(302, { location: "/oauth/authorize?client_id=a&response_type=code" }).end();
    res.writeHead(200).end("ok");
  });
  issuer = await startTestServer(
    (_req, res) => {
      const iss = issuer.url;
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          issuer: iss,
          authorization_endpoint: `${iss}/auth`,
          token_endpoint: `${iss}/token`,
          jwks_uri: `${iss}/jwks`,
          response_types_supported: ["code"],
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: ["RS256"],
        }),
      );
    },
    { tls: certs.valid },
  );
  env = {
    OUTBOUND_ALLOW: "127.0.0.1",
    // The server's own environment, as a user's shell would have it: a credential with no scheme.
    http_proxy: `alice:s3cret@127.0.0.1:${proxy.port}`,
    NO_PROXY: "10.0.0.0/8",
    no_proxy: "",
    // Node's own way to trust a private CA, read at start-up.
    NODE_EXTRA_CA_CERTS: certs.caFile,
    LOG_LEVEL: "debug",
  };
});
afterAll(async () => {
  for (const s of [web, issuer, proxy]) await s?.close();
  await certs?.cleanup();
});

const calls = (): Record<string, Record<string, unknown>> => ({
  proxy_env_status: {},
  proxy_connectivity_test: { url: `${web.url}/through` },
  sso_probe: { url: `${web.url}/app` },
  openid_config: { issuer: issuer.url },
});

async function exercise(client: Client): Promise<string> {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
  for (const tool of tools) {
    expect(tool.annotations?.readOnlyHint).toBe(true);
    expect(tool.annotations?.openWorldHint).toBe(OPEN_WORLD.includes(tool.name));
    expect(tool.inputSchema.properties).toHaveProperty("timeout_ms");
  }
  const results: Record<string, Record<string, unknown>> = {};
  for (const [name, args] of Object.entries(calls())) {
    const r = await client.callTool({ name, arguments: { ...args, run_id: `mcp-${name}` } });
    expect(r.isError, `${name}: ${JSON.stringify(r.content)}`).toBeFalsy();
    results[name] = r.structuredContent as Record<string, unknown>;
    expect(results[name]?.run_id).toBe(`mcp-${name}`);
  }
  expect(results.proxy_env_status).toMatchObject({
    http_proxy: `[masked]@127.0.0.1:${proxy.port}`,
    https_proxy: `[masked]@127.0.0.1:${proxy.port}`,
    variables: { http_proxy: `[masked]@127.0.0.1:${proxy.port}`, NO_PROXY: "10.0.0.0/8", no_proxy: "" },
  });
  // The env's proxy, with its credentials (the open proxy ignores them), carried the request.
  expect(results.proxy_connectivity_test).toMatchObject({ via_proxy: true, proxy_from: "http_proxy", status: 200 });
  expect(proxy.seen).toContain(`GET ${web.url}/through`);
  expect(results.sso_probe).toMatchObject({ idp: "OIDC provider", idp_host: "127.0.0.1" });
  expect(results.openid_config).toMatchObject({ ok: true, tls_authorized: true, problems: [] });
  const bad = await client.callTool({ name: "proxy_connectivity_test", arguments: { url: "http://192.0.2.10/" } });
  expect(bad.isError).toBe(true);
  expect(JSON.parse((bad.content as Array<{ text: string }>)[0]?.text ?? "{}").error.code).toBe("E_FORBIDDEN");
  return JSON.stringify(results);
}

describe.each(["http", "stdio"] as const)("MCP over %s", (transport) => {
  it("lists and calls every tool; JSON logs apart from protocol, none with a credential", async () => {
    const mcp = await openMcp(transport, "proxy", { env });
    try {
      const text = await exercise(mcp.client);
      expect(text).not.toContain("s3cret");
      const lines = mcp.logLines();
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
      expect(lines.join("\n")).not.toContain("s3cret");
    } finally {
      await mcp.close();
    }
  });
});
