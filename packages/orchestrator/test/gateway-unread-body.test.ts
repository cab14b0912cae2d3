/**
 * Regression (issue 18, sealed attacker review of `roadnerd up`): the gateway read request bodies of any size
 * on paths it has no POST route for. `POST /nope`, `POST /healthz`, a bare `POST /api/call`, `POST /api/watch`:
 * as root the whole 100 MB was read, then `404 E_UNKNOWN_TOOL` on a kept-alive connection; as uid 65534 (which
 * the gateway refuses) a 100 GB Content-Length to /nope was read for 10.9 s (1.97 GB) before its `403`, again
 * kept alive. Now every refusal (403, 404, 405, 413) is decided from the headers and closes the connection, a
 * Content-Length over the limit is refused before anything is read, and any answer given before the body is
 * read closes the connection (ADR 0055). Real sockets: a child process pushes a body as fast as the gateway
 * takes it (as root, or as uid 65534 through setpriv) and says whether and when the gateway closed.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { readRegistry } from "@roadnerd/registry";
import { scaledMs } from "@roadnerd/testkit";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Attacher } from "../src/attach.ts";
import { loadCatalog } from "../src/catalog.ts";
import { type GatewayHttp, serveGatewayHttp } from "../src/gateway-http.ts";
import { RulesPlanner } from "../src/planners/rules.ts";
import { MCP_HEADERS } from "./gateway-clients.ts";

let attacher: Attacher;
let gateway: GatewayHttp;
let port: number;

beforeAll(async () => {
  attacher = new Attacher({ servers: readRegistry() });
  gateway = await serveGatewayHttp({ catalog: await loadCatalog(), attacher, planner: () => new RulesPlanner() });
  port = Number(new URL(gateway.url).port);
});
afterAll(async () => {
  await gateway?.close();
  await attacher?.close();
});

/** What the pushing client saw: the answer's head, whether the gateway closed, after how long, bytes written. */
interface Pushed {
  head: string;
  closed: boolean;
  ms: number;
  written: number;
}

/**
 * Up to `most` bytes, 64 KiB at a time, as fast as the gateway takes them; stops at close or at its deadline. A
 * connection closed with the body unread ends in a reset, which may discard the answer before it is read: the
 * answer is checked with 64 KiB sent (it waits in the socket buffers), the volume read with 256 MiB pushed.
 */
const PUSHER = `const net=require("node:net");const [port,method,path,framing,deadline,most]=process.argv.slice(1);
const s=net.connect(Number(port),"127.0.0.1");let text="",written=0;const t0=Date.now();const max=Number(most);
s.on("error",()=>{});s.on("data",(c)=>{text+=c.toString("latin1")});
const data=Buffer.alloc(65536,0x20);const chunked=framing==="chunked";
const piece=chunked?Buffer.concat([Buffer.from("10000\\r\\n"),data,Buffer.from("\\r\\n")]):data;
s.write(method+" "+path+" HTTP/1.1\\r\\nhost: 127.0.0.1:"+port+"\\r\\ncontent-type: application/json\\r\\n"+
(chunked?"transfer-encoding: chunked":"content-length: 107374182400")+"\\r\\n\\r\\n");
function pump(){if(s.destroyed||written>=max)return;written+=data.length;s.write(piece,()=>setImmediate(pump))}
s.once("connect",pump);
let done=false;const end=(closed)=>{if(done)return;done=true;
process.stdout.write(JSON.stringify({head:text.split("\\r\\n\\r\\n")[0],closed,ms:Date.now()-t0,written}));process.exit(0)};
s.once("close",()=>end(true));setTimeout(()=>end(false),Number(deadline));`;

const run = promisify(execFile);

/** One request with a body the gateway must not read: as root, or as uid 65534 (setpriv). */
async function push(method: string, path: string, framing: string, most: number, asNobody: boolean): Promise<Pushed> {
  const args = [process.execPath, "-e", PUSHER, String(port), method, path, framing, String(scaledMs(8000)), `${most}`];
  const { stdout } = asNobody
    ? await run("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", ...args])
    : await run(process.execPath, args.slice(1));
  return JSON.parse(stdout) as Pushed;
}

/**
 * Answered from its headers with `status`, and the connection closed: with 64 KiB sent, the answer says
 * Connection: close; with 256 MiB pushed, the gateway closes having taken only what loopback's buffers hold
 * (before, all 256 MiB went in and the connection stayed).
 */
async function expectAnsweredAndClosed(
  method: string,
  path: string,
  framing: string,
  status: number,
  asNobody = false,
) {
  const small = await push(method, path, framing, 64 * 1024, asNobody);
  expect({ closed: small.closed, status: small.head.slice(9, 12) }).toEqual({ closed: true, status: String(status) });
  expect(small.head.toLowerCase()).toContain("connection: close");
  const big = await push(method, path, framing, 256 * 1024 * 1024, asNobody);
  expect(big.closed).toBe(true);
  expect(big.written).toBeLessThan(64 * 1024 * 1024);
}

describe("a body the gateway does not read, as root", () => {
  it("POST /nope, Content-Length 100 GB: 413 before anything is read", async () => {
    await expectAnsweredAndClosed("POST", "/nope", "length", 413);
  });

  for (const path of ["/nope", "/healthz", "/api/call", "/api/watch"]) {
    it(`POST ${path}, chunked: 404 from the headers, connection closed`, async () => {
      await expectAnsweredAndClosed("POST", path, "chunked", 404);
    });
  }

  it("PUT /mcp, chunked: 405, connection closed", async () => {
    await expectAnsweredAndClosed("PUT", "/mcp", "chunked", 405);
  });

  it("GET /healthz with a chunked body: answered, then the connection closed instead of reading it", async () => {
    await expectAnsweredAndClosed("GET", "/healthz", "chunked", 200);
  });
});

describe("a body from a uid the gateway refuses (65534)", () => {
  it("POST /nope, Content-Length 100 GB: refused before reading, connection closed", async () => {
    await expectAnsweredAndClosed("POST", "/nope", "length", 413, true);
  });

  for (const path of ["/healthz", "/nope", "/mcp"]) {
    it(`POST ${path}, chunked: 403 from the headers, connection closed`, async () => {
      await expectAnsweredAndClosed("POST", path, "chunked", 403, true);
    });
  }
});

describe("requests whose body is read keep their connection", () => {
  it("GET /healthz without a body and a tools/list POST to /mcp: kept alive", async () => {
    const health = await request(gateway.url.replace(/mcp$/, "healthz"));
    await health.body.text();
    const list = await request(gateway.url, {
      method: "POST",
      headers: MCP_HEADERS,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    await list.body.text();
    expect([health.headers.connection, list.headers.connection]).toEqual(["keep-alive", "keep-alive"]);
  });

  it("attached no server for any of it", () => {
    expect(readRegistry().filter((s) => attacher.isRunning(s.name))).toEqual([]);
  });
});
