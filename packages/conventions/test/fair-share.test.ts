/**
 * Regression (issue 18, F7): a server had no share per local user. Root holding 40 slow calls on network left
 * uid 65534 with E_BUSY 6 times of 6, directly and through the gateway. Now a caller over its share of the call
 * slots gives its newest call's slot up to a caller under it: that call is answered 503 E_BUSY at once, and the
 * other uid is served. Alone, a uid still fills the server and its next call is E_BUSY.
 * Real everything: a server on 127.0.0.1:0 (MAX_CALLS 4), root in this process, uid 65534 a setpriv child.
 */
import { execFile } from "node:child_process";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { pollUntil, scaledMs } from "@roadnerd/testkit";
import type { FastifyInstance } from "fastify";
import { Agent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RELAYED_CALLER_HEADER } from "../src/http/caller-key.ts";
import { buildHttpApp } from "../src/http/http-app.ts";
import type { Runtime } from "../src/runtime/runtime.ts";
import { testRuntime } from "../src/testing/inject.ts";
import { demoServer } from "./fixtures/demo-server.ts";

const run = promisify(execFile);
const NOBODY = 65534;
const MAX_CALLS = 4;

let app: FastifyInstance;
let runtime: Runtime<unknown>;
let base: string;
const agent = new Agent({ connections: 20 });

/** POST /actions/<tool> as uid 65534 from a child process: its status and body. */
async function asNobody(tool: string, body: unknown, headers: Record<string, string> = {}) {
  const { port } = new URL(base);
  const all = { "content-type": "application/json", ...headers };
  const script = `const h=require("node:http");const q=h.request({host:"127.0.0.1",port:${port},path:"/actions/${tool}",method:"POST",headers:${JSON.stringify(all)}},r=>{let b="";r.on("data",d=>b+=d);r.on("end",()=>process.stdout.write(JSON.stringify({status:r.statusCode,body:b})))});q.on("error",e=>process.stdout.write(JSON.stringify({status:0,body:String(e)})));q.end(${JSON.stringify(JSON.stringify(body))})`;
  const { stdout } = await run(
    "setpriv",
    [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", process.execPath, "-e", script],
    { timeout: scaledMs(20_000) },
  );
  return JSON.parse(stdout) as { status: number; body: string };
}

/** Root's slow calls (distinct, so none joins another): each resolves with its status and error code. */
function rootHolds(n: number, from: number, headers: Record<string, string> = {}) {
  return Array.from({ length: n }, (_, i) =>
    request(`${base}/actions/sleepy`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ ms: 14_000 + from + i, timeout_ms: 15_000 }),
      dispatcher: agent,
    }).then(async (r) => {
      const body = (await r.body.json()) as { error?: { code?: string } };
      return { status: r.statusCode, code: body.error?.code, retryAfter: r.headers["retry-after"] };
    }),
  );
}

beforeAll(async () => {
  runtime = testRuntime(demoServer, { env: { MAX_CALLS: String(MAX_CALLS), ALLOWED_UIDS: String(NOBODY) } });
  app = await buildHttpApp(runtime);
  await app.listen({ host: "127.0.0.1", port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await app?.close();
  await agent.close();
});

describe("a fair share of a server's call slots per local user", () => {
  it("root fills the server (its next call E_BUSY); uid 65534 is still served, root's newest call gives way", async () => {
    const answers: Array<{ status: number; code: string | undefined; retryAfter: unknown }> = [];
    const record = (p: ReturnType<typeof rootHolds>[number]) =>
      p.then((a) => {
        answers.push(a);
        return a;
      });
    const held = rootHolds(MAX_CALLS + 2, 0).map(record);
    await pollUntil(() => runtime.calls.active === MAX_CALLS && answers.length === 2, 10_000);
    // Alone, root fills every slot and its excess is refused, as before.
    expect(answers).toEqual([
      { status: 503, code: "E_BUSY", retryAfter: "1" },
      { status: 503, code: "E_BUSY", retryAfter: "1" },
    ]);

    // Before: 503 E_BUSY. A header naming root does not make nobody root (it counts from root or us only).
    const served = await asNobody("echo_name", { name: "example.com" }, { [RELAYED_CALLER_HEADER]: "uid:0" });
    expect(served.status).toBe(200);
    expect(JSON.parse(served.body)).toMatchObject({ name: "example.com" });
    // The slot came from one of root's held calls, answered 503 E_BUSY at once, not at its deadline.
    await pollUntil(() => answers.length === 3, 5_000);
    expect(answers[2]).toMatchObject({ status: 503, code: "E_BUSY", retryAfter: "1" });
    expect(runtime.calls.heldBy("uid:0")).toBe(MAX_CALLS - 1);

    // Root takes the freed slot again; then a gateway (a peer running as us) names the client it calls for:
    // that client is a caller of its own, not root.
    const again = rootHolds(1, 50).map(record);
    await pollUntil(() => runtime.calls.heldBy("uid:0") === MAX_CALLS, 5_000);
    const relayed = rootHolds(1, 100, { [RELAYED_CALLER_HEADER]: `uid:${NOBODY}` });
    await pollUntil(() => runtime.calls.heldBy(`uid:${NOBODY}`) === 1, 5_000);
    await pollUntil(() => answers.length === 4, 5_000);
    expect(answers[3]).toMatchObject({ status: 503, code: "E_BUSY" });
    expect(runtime.calls.heldBy("uid:0")).toBe(MAX_CALLS - 1);

    await app.close();
    for (const a of await Promise.all([...held, ...again, ...relayed])) expect([200, 503]).toContain(a.status);
  }, 60_000);
});
