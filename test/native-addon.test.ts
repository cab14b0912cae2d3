/**
 * The kernel's native module, sock-diag.node (ADR 0064), as `pnpm build` makes and places it: compiled from its
 * source with the machine's compiler into a module Node loads; said in one line, nothing written, without a
 * compiler; beside every bundle; a server started from its dist/ answers from netlink, and the same dist/ without
 * the module from /proc/net, alike. Its malloc_trim gives back the free pages of the heap (ADR 0069).
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { type AddressInfo, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { scaledMs, spawnListening } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT, selectedServers } from "../packages/registry/src/read-registry.ts";
import { ADDON_NAME, buildAddon } from "../scripts/lib/native-addon.ts";

let dir: string;
let held: Server;
let heldPort: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "rn-native-"));
  held = createServer();
  await new Promise<void>((r) => held.listen(0, "127.0.0.1", r));
  heldPort = (held.address() as AddressInfo).port;
});
afterAll(() => {
  held?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("building sock-diag.node", () => {
  it("compiles its source into a module Node loads, which answers a question", () => {
    const out = join(dir, "built", ADDON_NAME);
    expect(buildAddon(out)).toBeUndefined();
    const { request } = createRequire(import.meta.url)(out) as { request(q: Uint8Array): Buffer };
    // Too short to be a question: refused with a code, by the module just built.
    expect(() => request(new Uint8Array(4))).toThrow(expect.objectContaining({ code: "EINVAL" }));
  });

  it("without a compiler says why in one line and writes nothing", () => {
    const out = join(dir, "none", ADDON_NAME);
    const why = buildAddon(out, join(dir, "no-such-cc"));
    expect(why).toMatch(/^not compiled \(.*ENOENT.*\): the socket tables come from \/proc\/net$/);
    expect(existsSync(out)).toBe(false);
  });
});

describe("mallocTrim (ADR 0069)", () => {
  it("gives back the free heap pages between blocks still in use, which free() alone keeps", () => {
    const out = join(dir, "trim", ADDON_NAME);
    expect(buildAddon(out)).toBeUndefined();
    // In a child of its own (a known heap): ~150 MiB of 4 KB blocks freed, one in 64 kept, so no free space is at
    // the top of the heap, where glibc trims by itself.
    const script = `
      const { mallocTrim } = require(${JSON.stringify(out)});
      const rss = () => process.memoryUsage.rss() / 1048576;
      const keep = [];
      let all = [];
      for (let i = 0; i < 40000; i++) { const b = Buffer.allocUnsafeSlow(4000); b.fill(1); all.push(b); if (i % 64 === 0) keep.push(b); }
      all = null;
      for (let i = 0; i < 3; i++) gc();
      const before = rss();
      const released = mallocTrim();
      process.stdout.write(JSON.stringify({ released, freed: before - rss(), kept: keep.length }));`;
    const run = spawnSync(process.execPath, ["--expose-gc", "-e", script], { encoding: "utf8", timeout: 60_000 });
    expect(run.stderr).toBe("");
    const r = JSON.parse(run.stdout) as { released: boolean; freed: number; kept: number };
    expect(r.released).toBe(true);
    expect(r.freed).toBeGreaterThan(75);
  });
});

describe("every dist pnpm build made", () => {
  it("carries the module beside its bundle", () => {
    const dists = [
      ...selectedServers().map((s) => join(REPO_ROOT, s.dir, "dist")),
      join(REPO_ROOT, "packages/orchestrator/dist"),
    ];
    expect(dists.filter((d) => !existsSync(join(d, ADDON_NAME)))).toEqual([]);
  });

  /** listening_sockets of a ports server started from `main`: its source and whether our listener is in it. */
  async function listing(main: string): Promise<{ source: string; ours: boolean }> {
    const server = await spawnListening([process.execPath, main], { timeoutMs: scaledMs(30_000) });
    try {
      const res = await fetch(`${server.url}/actions/listening_sockets`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ proto: "tcp", limit: 500 }),
      });
      const body = (await res.json()) as { source: string; sockets: Array<{ port: number }> };
      return { source: body.source, ours: body.sockets.some((s) => s.port === heldPort) };
    } finally {
      await server.stop();
    }
  }

  it("ports from its dist/ answers from netlink; the same dist/ without the module from /proc/net, alike", async () => {
    const built = join(REPO_ROOT, "servers/ports/dist");
    const bare = join(dir, "ports-dist");
    cpSync(built, bare, { recursive: true });
    rmSync(join(bare, ADDON_NAME));
    expect(await listing(join(built, "main.js"))).toEqual({ source: "netlink", ours: true });
    expect(await listing(join(bare, "main.js"))).toEqual({ source: "proc", ours: true });
  });
});
