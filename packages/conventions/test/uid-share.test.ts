/**
 * The connection cap's share per uid (issue 18): a lone uid may use the whole cap, but when another uid
 * connects to a full cap, the uid holding more than half gives way (its oldest connection is cut). Before, the newcomer was refused at the cap. Real
 * sockets: root (this test) and uid 65534 (setpriv), both allowed, against a cap of 8.
 */
import { execFile } from "node:child_process";
import { once } from "node:events";
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";
import { promisify } from "node:util";
import { pollUntil, scaledMs } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { capConnections } from "../src/http/connection-bounds.ts";

const CAP = 8;
let server: Server;
let port: number;
const mine: Socket[] = [];

beforeAll(async () => {
  server = createServer(() => {});
  capConnections(server, CAP, { allowed: new Set([0, process.getuid?.() ?? 0, 65534]) });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const s of mine) s.destroy();
  await new Promise((r) => server.close(r));
});

const openOf = (sockets: Socket[]) => sockets.filter((s) => !s.destroyed && !s.readableEnded).length;

async function open(): Promise<Socket> {
  const s = connect(port, "127.0.0.1");
  s.on("error", () => {});
  s.on("end", () => s.destroy());
  mine.push(s);
  await once(s, "connect");
  return s;
}

describe("the connection cap's share per uid", () => {
  it("root alone holds all 8; uid 65534 connecting then is kept, root's oldest gives way", async () => {
    for (let i = 0; i < CAP; i++) await open();
    // Let the judgements land: a lone uid keeps every slot.
    await new Promise((r) => setTimeout(r, scaledMs(300)));
    expect(openOf(mine)).toBe(CAP);
    // uid 65534 connects and reports whether its connection lived 1 s.
    const script = `const s=require("node:net").connect(${port},"127.0.0.1");let cut=false;s.on("error",()=>{cut=true});s.on("close",()=>{cut=true});setTimeout(()=>{process.stdout.write(cut?"cut":"kept");process.exit(0)},${scaledMs(1000)})`;
    const other = promisify(execFile)("setpriv", [
      "--reuid=65534",
      "--regid=65534",
      "--clear-groups",
      process.execPath,
      "-e",
      script,
    ]);
    expect(await pollUntil(() => openOf(mine) === CAP - 1, 3000)).toBe(true);
    expect(mine[0]?.destroyed || mine[0]?.readableEnded).toBe(true);
    expect((await other).stdout).toBe("kept");
  }, 30_000);
});

/** What uid 65534's idle socket (it sends nothing) receives within 1 s: "" when nothing, else the status line. */
async function idleAsNobody(at: number): Promise<string> {
  const script = `const s=require("node:net").connect(${at},"127.0.0.1");let got="";s.on("error",()=>{});s.on("data",d=>{got+=d});setTimeout(()=>{process.stdout.write(got.split("\\r\\n")[0]);process.exit(0)},${scaledMs(1000)})`;
  const { stdout } = await promisify(execFile)("setpriv", [
    "--reuid=65534",
    "--regid=65534",
    "--clear-groups",
    process.execPath,
    "-e",
    script,
  ]);
  return stdout;
}

describe("judged only under pressure (a refused uid, cap 8)", () => {
  let strict: Server;
  let strictPort: number;
  const held: Socket[] = [];
  beforeAll(async () => {
    strict = createServer(() => {});
    capConnections(strict, CAP, { allowed: new Set([0, process.getuid?.() ?? 0]) });
    strict.listen(0, "127.0.0.1");
    await once(strict, "listening");
    strictPort = (strict.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const s of held) s.destroy();
    await new Promise((r) => strict.close(r));
  });

  it("below half, nothing is looked up: uid 65534's idle socket gets nothing", async () => {
    expect(await idleAsNobody(strictPort)).toBe("");
  }, 30_000);

  it("from half on, it is judged and gets its 403", async () => {
    for (let i = 0; i < CAP / 2; i++) {
      const s = connect(strictPort, "127.0.0.1");
      s.on("error", () => {});
      held.push(s);
      await once(s, "connect");
    }
    expect(await idleAsNobody(strictPort)).toBe("HTTP/1.1 403 Forbidden");
  }, 30_000);
});
