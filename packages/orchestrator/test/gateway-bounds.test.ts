/**
 * Regressions: the gateway was weaker than the servers. A stopped server hung a call that asked for
 * timeout_ms 1000 past 30 s (no deadline towards the server); a server's connection failing under a call came
 * back as E_INTERNAL; 1,100 idle sockets took the gateway down (no cap, Node's 60 s / 300 s timeouts).
 * Real sockets: a fake "server" on 127.0.0.1:0 whose /healthz answers and whose /actions hangs or resets,
 * and idle peers that never close against the real gateway.
 */
import { execFile } from "node:child_process";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { promisify } from "node:util";
import { HTTP_SERVER_BOUNDS } from "@roadnerd/conventions/internal";
import { readRegistry } from "@roadnerd/registry";
import { scaledMs } from "@roadnerd/testkit";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANSWER_MARGIN_MS, Attacher } from "../src/attach.ts";
import { loadCatalog } from "../src/catalog.ts";
import { type GatewayHttp, serveGatewayHttp } from "../src/gateway-http.ts";
import { RulesPlanner } from "../src/planners/rules.ts";

let stuck: Server;
let url: string;
const held: Array<() => void> = [];
const HEADERS_TIMEOUT_MS = HTTP_SERVER_BOUNDS.headersTimeout;

beforeAll(async () => {
  // /healthz as network would answer it; /actions/route_info never answers (SIGSTOPped); /actions/reset drops.
  stuck = createServer((req, res) => {
    if (req.url === "/healthz") return void res.end(JSON.stringify({ ok: true, name: "network", version: "x" }));
    if (req.url?.startsWith("/actions/reset")) return void req.socket.destroy();
    held.push(() => res.destroy());
  });
  stuck.listen(0, "127.0.0.1");
  await once(stuck, "listening");
  url = `http://127.0.0.1:${(stuck.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const release of held) release();
  stuck?.closeAllConnections();
  await new Promise((r) => stuck?.close(r));
});

describe("a deadline towards each server", () => {
  it("a server that never answers fails the call with E_TIMEOUT soon after the caller's timeout_ms", async () => {
    const a = new Attacher({ servers: readRegistry(), remote: new Map([["network", { url }]]) });
    const started = performance.now();
    const err = await a.call("network", "route_info", { timeout_ms: 1000 }).catch((e: unknown) => e);
    const ms = performance.now() - started;
    expect(err).toMatchObject({ code: "E_TIMEOUT", message: expect.stringContaining("did not answer route_info") });
    expect(ms).toBeGreaterThanOrEqual(1000);
    expect(ms).toBeLessThan(scaledMs(1000 + ANSWER_MARGIN_MS + 2000));
    await a.close();
  }, 30_000);

  it("a connection failing under the call is E_ATTACH, not E_INTERNAL", async () => {
    const a = new Attacher({ servers: readRegistry(), remote: new Map([["network", { url }]]) });
    await expect(a.call("network", "reset", {})).rejects.toMatchObject({ code: "E_ATTACH" });
    await a.close();
  });
});

describe("the gateway's connection bounds", () => {
  let gateway: GatewayHttp;
  const peers: Socket[] = [];
  beforeAll(async () => {
    const attacher = new Attacher({ servers: readRegistry() });
    gateway = await serveGatewayHttp({ catalog: await loadCatalog(), attacher, planner: () => new RulesPlanner() }, 0, {
      maxConnections: 64,
    });
  });
  afterAll(async () => {
    for (const s of peers) s.destroy();
    await gateway?.close();
  });

  it("200 idle peers that never close over a cap of 64: each is answered or cut within the headers timeout", async () => {
    const { port, origin } = new URL(gateway.url);
    const heard = new Set<Socket>();
    await Promise.all(
      Array.from({ length: 200 }, async () => {
        const s = connect({ port: Number(port), host: "127.0.0.1", allowHalfOpen: true });
        s.on("error", () => {});
        for (const event of ["data", "end", "close"]) s.on(event, () => heard.add(s));
        peers.push(s);
        await once(s, "connect");
      }),
    );
    // Node's defaults (no cap, 60 s for headers) left all 200 silent for a minute.
    const deadline = performance.now() + scaledMs(HEADERS_TIMEOUT_MS + 3_000);
    while (heard.size < peers.length && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(heard.size).toBe(peers.length);
    const res = await request(`${origin}/healthz`, { headersTimeout: 2000, bodyTimeout: 2000 });
    await res.body.dump();
    expect(res.statusCode).toBe(200);
  }, 60_000);

  it("two Host headers are refused", async () => {
    const { port } = new URL(gateway.url);
    const s = connect(Number(port), "127.0.0.1");
    await once(s, "connect");
    s.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nHost: evil.com\r\nConnection: close\r\n\r\n`);
    let text = "";
    s.on("data", (d) => {
      text += d;
    });
    await once(s, "close");
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
  });
});

/**
 * Regression (review after the merge): the gateway had no uid check, so `nobody` got root's view of every tool
 * through it (it calls the servers as itself). Now the servers' rule holds at the gateway too.
 */
describe("the gateway and the other local users", () => {
  let gateway: GatewayHttp;
  beforeAll(async () => {
    const attacher = new Attacher({ servers: readRegistry() });
    gateway = await serveGatewayHttp({ catalog: await loadCatalog(), attacher, planner: () => new RulesPlanner() });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  /** POST tools/list to /mcp as uid 65534, from a child process: the status and body. */
  async function asNobody(): Promise<{ status: number; body: string }> {
    const { port } = new URL(gateway.url);
    const rpc = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
    const script = `const h=require("node:http");const q=h.request({host:"127.0.0.1",port:${port},path:"/mcp",method:"POST",headers:{"content-type":"application/json",accept:"application/json, text/event-stream","mcp-protocol-version":"2025-06-18"}},r=>{let b="";r.on("data",d=>b+=d);r.on("end",()=>process.stdout.write(JSON.stringify({status:r.statusCode,body:b})))});q.on("error",e=>process.stdout.write(JSON.stringify({status:0,body:String(e)})));q.end(${JSON.stringify(rpc)})`;
    const { stdout } = await promisify(execFile)("setpriv", [
      "--reuid=65534",
      "--regid=65534",
      "--clear-groups",
      process.execPath,
      "-e",
      script,
    ]);
    return JSON.parse(stdout) as { status: number; body: string };
  }

  it("nobody is refused with 403 E_FORBIDDEN naming its uid; root (this test) is served; /healthz stays open", async () => {
    const refused = await asNobody();
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).error).toMatchObject({
      code: "E_FORBIDDEN",
      message: "local user uid 65534 may not call this gateway",
    });
    const mine = await request(gateway.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(mine.statusCode).toBe(200);
    expect(JSON.stringify(await mine.body.json())).toContain("triage");
    const health = await request(gateway.url.replace(/mcp$/, "healthz"));
    expect(health.statusCode).toBe(200);
    await health.body.dump();
  });
});
