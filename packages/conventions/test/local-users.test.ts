/**
 * Regression: every local user got root's view. Servers bind loopback with no token and run as root, so
 * `nobody` listed /root through storage. A root-run server now answers, on loopback, only its own user, root,
 * the user who ran sudo and ALLOWED_UIDS, read from the kernel's socket table; anyone else needs the token.
 * Here a real second uid (setpriv to nobody) against a real server on 127.0.0.1, the client's socket found by
 * the kernel's exact lookup (netlink, ADR 0064) and, with the addon turned off, in /proc/net's tables.
 */
import { execFile } from "node:child_process";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import type { FastifyInstance } from "fastify";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildHttpApp } from "../src/http/http-app.ts";
import { sockDiagOff, sockDiagStatus } from "../src/netlink/sock-diag.ts";
import { testRuntime } from "../src/testing/inject.ts";
import { demoServer } from "./fixtures/demo-server.ts";

const run = promisify(execFile);
const NOBODY = 65534;
const TOKEN = "a-test-token-of-24-chars";

/** GET `path` as uid 65534 from a child process: its status and body. */
async function asNobody(port: number, path: string, headers: Record<string, string> = {}, host = "127.0.0.1") {
  const script = `const h=require("node:http");h.get({host:${JSON.stringify(host)},port:${port},path:${JSON.stringify(path)},headers:${JSON.stringify(headers)}},r=>{let b="";r.on("data",d=>b+=d);r.on("end",()=>{process.stdout.write(JSON.stringify({status:r.statusCode,body:b}))})}).on("error",e=>{process.stdout.write(JSON.stringify({status:0,body:String(e)}))})`;
  const { stdout } = await run("setpriv", [
    `--reuid=${NOBODY}`,
    `--regid=${NOBODY}`,
    "--clear-groups",
    process.execPath,
    "-e",
    script,
  ]);
  return JSON.parse(stdout) as { status: number; body: string };
}

async function serve(env: Record<string, string>, host = "127.0.0.1"): Promise<{ app: FastifyInstance; port: number }> {
  const app = await buildHttpApp(testRuntime(demoServer, { env }));
  await app.listen({ host, port: 0 });
  return { app, port: (app.server.address() as AddressInfo).port };
}

describe.each([
  { lookup: "netlink", off: false },
  { lookup: "/proc/net's tables", off: true },
])("a root-run server on loopback and the other local users ($lookup)", ({ off }) => {
  let plain: { app: FastifyInstance; port: number };
  let tokened: { app: FastifyInstance; port: number };
  let open: { app: FastifyInstance; port: number };
  let dual: { app: FastifyInstance; port: number };
  beforeAll(async () => {
    sockDiagOff(off);
    // The netlink round must ask netlink (pnpm build compiles the addon), or it would test the tables twice.
    if (!off) expect(sockDiagStatus()).toMatchObject({ available: true });
    plain = await serve({});
    // "::": IPv6 clients and IPv4 ones (the client's socket in tcp6 or in tcp, read only when tcp has no answer).
    dual = await serve({}, "::");
    tokened = await serve({ AUTH_TOKEN: TOKEN });
    open = await serve({ ALLOWED_UIDS: String(NOBODY) });
  });
  afterAll(async () => {
    sockDiagOff(false);
    await Promise.all([plain?.app.close(), tokened?.app.close(), open?.app.close(), dual?.app.close()]);
  });

  it("nobody is refused a tool, 403 E_FORBIDDEN naming its uid; /healthz stays open", async () => {
    const res = await asNobody(plain.port, "/actions");
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body).error).toMatchObject({
      code: "E_FORBIDDEN",
      message: `local user uid ${NOBODY} may not call this server`,
    });
    expect((await asNobody(plain.port, "/sse/echo_name?name=example.com")).status).toBe(403);
    expect((await asNobody(plain.port, "/healthz")).status).toBe(200);
  });

  it("root (this process's user) is served", async () => {
    const res = await request(`http://127.0.0.1:${plain.port}/actions`);
    expect(res.statusCode).toBe(200);
    await res.body.dump();
  });

  it("nobody with the token is served; listed in ALLOWED_UIDS it is served without", async () => {
    expect((await asNobody(tokened.port, "/actions", { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    expect((await asNobody(tokened.port, "/actions")).status).toBe(401);
    expect((await asNobody(open.port, "/actions")).status).toBe(200);
  });

  it("a request whose connection nobody resets at once runs nothing (the peer is gone: refused, not waved through)", async () => {
    // Regression (stop 31's review): with its addresses gone by the time the rule looked, a reset connection was
    // taken for an injected test request and its tool ran as root (46 of 50). Now it is refused like any
    // caller that cannot be named; either way the call must never run.
    const calls = async () => {
      const res = await request(`http://127.0.0.1:${plain.port}/metrics`);
      const text = await res.body.text();
      return Number(/roadnerd_tool_calls_total\{[^}]*tool="echo_name"[^}]*\} (\d+)/.exec(text)?.[1] ?? 0);
    };
    const before = await calls();
    const body = JSON.stringify({ name: "example.com" });
    const raw = `POST /actions/echo_name HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
    // 20 connections from nobody, each writing its request and resetting (RST) at once.
    const script = `const net=require("node:net");let left=20;for(let i=0;i<20;i++){const s=net.connect(${plain.port},"127.0.0.1",()=>{s.write(${JSON.stringify(raw)},()=>{s.resetAndDestroy();if(--left===0)setTimeout(()=>process.exit(0),300)})});s.on("error",()=>{})}`;
    await run("setpriv", [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", process.execPath, "-e", script]);
    // A request served as root still counts: the counter works.
    const ok = await request(`http://127.0.0.1:${plain.port}/actions/echo_name`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    expect(ok.statusCode).toBe(200);
    await ok.body.dump();
    expect(await calls()).toBe(before + 1);
  });

  it("a client's socket is found in tcp6 as in tcp: nobody over ::1 and over 127.0.0.1 at a dual-stack server", async () => {
    for (const host of ["127.0.0.1", "::1"]) {
      const res = await asNobody(dual.port, "/actions", {}, host);
      expect(res.status, host).toBe(403);
      expect(JSON.parse(res.body).error.message, host).toBe(`local user uid ${NOBODY} may not call this server`);
    }
    for (const host of ["127.0.0.1", "[::1]"]) {
      const res = await request(`http://${host}:${dual.port}/actions`);
      expect(res.statusCode, host).toBe(200);
      await res.body.dump();
    }
  });
});
