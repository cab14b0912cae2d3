/**
 * Regression (sealed attacker review F8): a flood of tools/list at the gateway's /mcp (not a tool call, so outside
 * the per-client share of calls) delayed another uid's tool call to E_TIMEOUT once (8.2 s). Now every MCP request
 * holds a slot of its client's request share (ROADNERD_CLIENT_REQUESTS, default 8) from its arrival, and tools/list is serialized
 * once. Client B (uid 65534, a child process run with setpriv) opens 40 requests and holds them before their
 * last byte: 8 are let in, 32 are refused 503 E_BUSY at once; client A's tool call is served meanwhile; B's 8
 * get the whole list when it finishes them.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import { readRegistry } from "@roadnerd/registry";
import { scaledMs } from "@roadnerd/testkit";
import { request } from "undici";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Attacher } from "../src/attach.ts";
import { type Catalog, loadCatalog } from "../src/catalog.ts";
import { DEFAULT_CLIENT_REQUESTS as REQUEST_SHARE } from "../src/config.ts";
import { type GatewayHttp, serveGatewayHttp } from "../src/gateway-http.ts";
import { RulesPlanner } from "../src/planners/rules.ts";
import { MCP_HEADERS, rpc } from "./gateway-clients.ts";

const FLOOD = 40;
let target: ReturnType<typeof createServer>;
let targetUrl: string;
let catalog: Catalog;
let attacher: Attacher;
let gateway: GatewayHttp;
const savedUids = process.env.ALLOWED_UIDS;

beforeAll(async () => {
  target = createServer((_req, res) => res.end("ok"));
  target.listen(0, "127.0.0.1");
  await once(target, "listening");
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  process.env.ALLOWED_UIDS = "65534"; // client B is a second local user the gateway serves
  catalog = await loadCatalog();
  attacher = new Attacher({ servers: readRegistry() });
  gateway = await serveGatewayHttp({ catalog, attacher, planner: () => new RulesPlanner() });
  // Attach network first (its spawn is not what is measured).
  const warm = await request(gateway.url, { method: "POST", headers: MCP_HEADERS, body: rpc(0, `${targetUrl}/warm`) });
  expect(warm.statusCode).toBe(200);
  await warm.body.dump();
}, 60_000);

afterAll(async () => {
  if (savedUids === undefined) delete process.env.ALLOWED_UIDS;
  else process.env.ALLOWED_UIDS = savedUids;
  await gateway?.close();
  await attacher?.close();
  target?.closeAllConnections();
  await new Promise((r) => target?.close(r));
});

/**
 * Client B's flood, as a script: FLOOD raw tools/list requests, each sent but its last byte; "held" once every
 * refusal it can get has come (or a bound passed); on a line from stdin, the last bytes; then every status.
 */
function floodScript(port: number): string {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
  const head = Object.entries({ ...MCP_HEADERS, host: `127.0.0.1:${port}`, "content-length": body.length })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("");
  return `
const net = require("node:net");
const raw = ${JSON.stringify(`POST /mcp HTTP/1.1\r\n${head}\r\n`)} + ${JSON.stringify(body)};
const answers = [];
const sockets = [];
for (let i = 0; i < ${FLOOD}; i += 1) {
  const s = net.connect(${port}, "127.0.0.1");
  let text = "";
  s.on("data", (d) => { text += d; });
  s.on("error", () => undefined);
  s.on("close", () => answers.push({ status: Number(text.slice(9, 12)) || 0, length: text.length }));
  s.write(raw.slice(0, -1));
  sockets.push(s);
}
const deadline = Date.now() + ${scaledMs(10_000)};
const wait = setInterval(() => {
  if (answers.length < ${FLOOD - REQUEST_SHARE} && Date.now() < deadline) return;
  clearInterval(wait);
  process.stdout.write("held\\n");
  process.stdin.once("data", () => {
    for (const s of sockets) if (!s.destroyed) s.end(raw.slice(-1));
    // Each answer ends its connection (B closes after the last byte; the gateway answers, then closes).
    const done = setInterval(() => {
      if (answers.length < ${FLOOD}) return;
      clearInterval(done);
      process.stdout.write(JSON.stringify(answers) + "\\n");
    }, 20);
  });
}, 20);
`;
}

it("one uid's tools/list flood holds its request share; another uid's tool call is served meanwhile", async () => {
  const { port } = new URL(gateway.url);
  const child = spawn(
    "setpriv",
    ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "-e", floodScript(Number(port))],
    { stdio: ["pipe", "pipe", "inherit"], timeout: scaledMs(60_000) },
  );
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  expect((await lines.next()).value).toBe("held");

  // Client A (this process's uid) while B's requests are held: its tool call reaches network and is answered.
  const a = await request(gateway.url, { method: "POST", headers: MCP_HEADERS, body: rpc(2, `${targetUrl}/a`) });
  expect(a.statusCode).toBe(200);
  const result = ((await a.body.json()) as { result: { isError?: boolean; structuredContent: unknown } }).result;
  expect(result.isError).toBeUndefined();
  expect(result.structuredContent).toMatchObject({ status: 200 });

  child.stdin.write("go\n");
  const answers = JSON.parse(String((await lines.next()).value)) as Array<{ status: number; length: number }>;
  child.stdin.end();
  const statuses = answers.map((x) => x.status).sort();
  // Before: 40 × 200 (every request let in, each answered with the whole catalog serialized again).
  expect(statuses).toEqual([...Array(REQUEST_SHARE).fill(200), ...Array(FLOOD - REQUEST_SHARE).fill(503)]);
  // The 8 let in got the whole list (the serialized-once answer is the same text every time).
  const listed = answers.filter((x) => x.status === 200).map((x) => x.length);
  expect(new Set(listed).size).toBe(1);
  expect(listed[0]).toBeGreaterThan(catalog.entries.length * 200);
}, 120_000);
