/**
 * Proxy's per-tool latency against the command a user would type (`curl -x`, `curl -L`, `cat`), and, as an
 * informational floor, the same work done with undici directly, in the same run: a GET through the same local
 * forward proxy (ProxyAgent, proxyTunnel off for http, CONNECT for https), the same redirect chain, the same
 * discovery document, the same files read. Everything on loopback. Used by `pnpm bench`.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer, request as httpRequest, type ServerResponse } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { type BenchCall, type BenchContext, generateTestCerts, startTestServer } from "@roadnerd/testkit";
import { Agent, ProxyAgent, request } from "undici";

/** The files proxy_env_status reads besides its environment. */
const PROXY_FILES = ["/etc/environment", "/etc/apt/apt.conf"];

/**
 * A minimal forward proxy (absolute-form GET and CONNECT). The npm `proxy` package the tests use cannot be
 * bundled (it requires its own package.json at run time), and the bench is bundled by esbuild.
 */
async function startBenchProxy(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const target = new URL(req.url ?? "/");
    const upstream = httpRequest(target, { method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.once("error", () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  server.on("connect", (req, socket, head) => {
    const [host, port] = (req.url ?? "").split(":");
    const up = connect(Number(port), host ?? "127.0.0.1", () => {
      socket.write("HTTP/1.1 200 Connection established\r\n\r\n");
      up.write(head);
      up.pipe(socket).pipe(up);
    });
    up.once("error", () => socket.destroy());
    socket.once("error", () => up.destroy());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export async function benchLatency(b: BenchContext): Promise<void> {
  const certs = await generateTestCerts();
  const proxy = await startBenchProxy();
  const web = await startTestServer((req, res: ServerResponse) => {
    if (req.url === "/app") return void res.writeHead(302, { location: "/login" }).end();
    if (req.url === "/login")
      return void res.writeHead(302, { location: "/oauth/authorize?client_id=a&response_type=code" }).end();
    res.writeHead(200).end("ok");
  });
  const secure = await startTestServer(
    (_req, res) => {
      const iss = secure.url;
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
  const ca = await readFile(certs.caFile, "utf8");
  const srv = await b.start({ OUTBOUND_ALLOW: "127.0.0.1", PROXY_CA_FILE: certs.caFile });
  // A fresh connection per request, as the tool makes: the comparison is the tool's overhead, not pooling.
  const fresh = () => ({ reset: true, headers: { connection: "close" } });
  try {
    const envStatus = () => b.call(srv, "proxy_env_status", {});
    await b.pairCommand("proxy_env_status", envStatus, ["cat", ...PROXY_FILES.filter((f) => existsSync(f))]);
    await b.pair(
      "proxy_env_status",
      envStatus,
      "read /etc/environment + apt.conf",
      () => Promise.allSettled(PROXY_FILES.map((f) => readFile(f, "utf8"))),
      { floor: true },
    );
    const curl = ["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}"];
    const connHttp = () => b.call(srv, "proxy_connectivity_test", { url: `${web.url}/`, proxy: proxy.url });
    await b.pairCommand("proxy_conn http", connHttp, [...curl, "-x", proxy.url, `${web.url}/`]);
    await b.pair(
      "proxy_conn http",
      connHttp,
      "undici ProxyAgent (no tunnel)",
      async () => {
        const agent = new ProxyAgent({ uri: proxy.url, proxyTunnel: false });
        const r = await request(`${web.url}/`, { dispatcher: agent, ...fresh() });
        await r.body.dump();
        await agent.close();
      },
      { floor: true },
    );
    const connHttps = () => b.call(srv, "proxy_connectivity_test", { url: `${secure.url}/`, proxy: proxy.url });
    await b.pairCommand("proxy_conn https", connHttps, [
      ...curl,
      "--cacert",
      certs.caFile,
      "-x",
      proxy.url,
      `${secure.url}/`,
    ]);
    await b.pair(
      "proxy_conn https",
      connHttps,
      "undici ProxyAgent (CONNECT)",
      async () => {
        const agent = new ProxyAgent({ uri: proxy.url, requestTls: { ca } });
        const r = await request(`${secure.url}/`, { dispatcher: agent, ...fresh() });
        await r.body.dump();
        await agent.close();
      },
      { floor: true },
    );
    const sso = () => b.call(srv, "sso_probe", { url: `${web.url}/app` });
    await b.pairCommand("sso_probe (3 hops)", sso, [...curl, "-L", `${web.url}/app`]);
    await b.pair(
      "sso_probe (3 hops)",
      sso,
      "undici, 3 GETs",
      async () => {
        for (const path of ["/app", "/login", "/oauth/authorize?client_id=a&response_type=code"]) {
          const r = await request(`${web.url}${path}`, fresh());
          await r.body.dump();
        }
      },
      { floor: true },
    );
    const openid = () => b.call(srv, "openid_config", { issuer: secure.url });
    await b.pairCommand("openid_config", openid, [
      ...curl,
      "--cacert",
      certs.caFile,
      `${secure.url}/.well-known/openid-configuration`,
    ]);
    await b.pair(
      "openid_config",
      openid,
      "undici GET + JSON.parse",
      async () => {
        const agent = new Agent({ connect: { ca } });
        const r = await request(`${secure.url}/.well-known/openid-configuration`, { dispatcher: agent, ...fresh() });
        JSON.parse(await r.body.text());
        await agent.close();
      },
      { floor: true },
    );
  } finally {
    srv.kill();
    for (const s of [web, secure, proxy]) await s.close();
    await certs.cleanup();
  }
}

/** A cheap call for the /mcp vs /actions comparison: the environment and a few files. */
export async function cheapCall(): Promise<BenchCall> {
  return { tool: "proxy_env_status", args: {}, close: () => {} };
}
