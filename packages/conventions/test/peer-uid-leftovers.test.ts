/**
 * Regression (stop 31's review): the owner of a connection's client end is a socket a process holds. A client
 * that closed first leaves a FIN_WAIT2 leftover that the kernel reports as uid 0 with inode 0, and the kernel's
 * exact lookup falls back to a listener on the client's port (uid 0 too): both were taken for root. Neither is
 * an owner now, by the exact lookup (netlink, ADR 0064) or in /proc/net's tables.
 */
import { execFile } from "node:child_process";
import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { peerUids } from "../src/http/peer-uid.ts";
import { sockDiagOff } from "../src/netlink/sock-diag.ts";

const run = promisify(execFile);
const NOBODY = 65534;
let server: Server;
let port: number;
const held: Socket[] = [];

beforeAll(async () => {
  // Accepts and never closes: a client that closes first stays in FIN_WAIT2.
  server = createServer((s) => held.push(s));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => {
  for (const s of held) s.destroy();
  server?.close();
  sockDiagOff(false);
});

/** A connection from nobody that nobody closes first (FIN) and then exits: its client port. */
async function closedByNobody(): Promise<number> {
  const script = `const s=require("node:net").connect(${port},"127.0.0.1",()=>{process.stdout.write(String(s.localPort));s.end();setTimeout(()=>process.exit(0),200)})`;
  const { stdout } = await run("setpriv", [
    `--reuid=${NOBODY}`,
    `--regid=${NOBODY}`,
    "--clear-groups",
    process.execPath,
    "-e",
    script,
  ]);
  return Number(stdout);
}

describe.each([
  { lookup: "netlink", off: false },
  { lookup: "/proc/net's tables", off: true },
])("leftovers are no owner ($lookup)", ({ off }) => {
  it("a FIN_WAIT2 leftover of a client that closed first and exited: no owner, not root", async () => {
    sockDiagOff(off);
    const clientPort = await closedByNobody();
    expect(clientPort).toBeGreaterThan(0);
    const uids = await peerUids({ address: "127.0.0.1", port: clientPort }, { address: "127.0.0.1", port });
    expect(uids).toEqual([]);
  });

  it("a listener on the asked client port is no owner either (the lookup's fallback)", async () => {
    sockDiagOff(off);
    // Root's listener on `port`: asked as if it were a client's end talking to some other port.
    const uids = await peerUids({ address: "127.0.0.1", port }, { address: "127.0.0.1", port: 9 });
    expect(uids).toEqual([]);
  });

  it("a live client's end still names its owner", async () => {
    sockDiagOff(off);
    const script = `const s=require("node:net").connect(${port},"127.0.0.1",()=>{process.stdout.write(String(s.localPort)+"\\n");setTimeout(()=>process.exit(0),3000)})`;
    const child = execFile("setpriv", [
      `--reuid=${NOBODY}`,
      `--regid=${NOBODY}`,
      "--clear-groups",
      process.execPath,
      "-e",
      script,
    ]);
    try {
      const clientPort = await new Promise<number>((resolve) =>
        child.stdout?.once("data", (d: Buffer) => resolve(Number(d.toString().trim()))),
      );
      const uids = await peerUids({ address: "127.0.0.1", port: clientPort }, { address: "127.0.0.1", port });
      expect(uids).toEqual([NOBODY]);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
