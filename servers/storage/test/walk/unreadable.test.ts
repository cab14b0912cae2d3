/**
 * Unreadable directories, honestly: root reads a chmod 000 directory anyway (CAP_DAC_READ_SEARCH), so the
 * in-process walk (the tests run as root) counts it. The path a real user hits is checked by running the
 * built server itself as nobody (setpriv), where the kernel answers EACCES: a directory with no permissions
 * (cannot be listed) and one with r but no x (listed, its entries cannot be lstat'ed) are counted in
 * `skipped.unreadable`, not fatal, and the rest of the tree is still sized.
 */
import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { createClient } from "@roadnerd/client";
import { callTool } from "@roadnerd/conventions/testing";
import { type SpawnedServer, spawnServer } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { server } from "../../src/server.ts";
import { topConsumers } from "../../src/tools/top-consumers.ts";
import { type ScratchMounts, scratchMounts } from "../helpers/scratch-mounts.ts";
import { file, MIB } from "../helpers/trees.ts";

const NOBODY = "65534";
let m: ScratchMounts;
let root: string;
let tree: string;
let asNobody: SpawnedServer;

interface Answer {
  scanned: { dirs: number; files: number; bytes: number };
  skipped: { unreadable: number };
  entries: Array<{ name: string; size_mb: number }>;
  truncated: boolean;
}

beforeAll(async () => {
  m = scratchMounts("rn-storage-perm-");
  chmodSync(m.base, 0o755); // nobody must reach the root through it
  root = m.tmpfs(join(m.base, "root"), "size=64m,mode=755");
  tree = join(root, "tree");
  for (const d of ["open", "locked/inner", "listonly"]) mkdirSync(join(tree, d), { recursive: true });
  file(join(tree, "open/a"), MIB);
  file(join(tree, "locked/inner/b"), 2 * MIB);
  file(join(tree, "listonly/c"), 3 * MIB);
  chmodSync(join(tree, "locked"), 0o000);
  chmodSync(join(tree, "listonly"), 0o444);
  asNobody = await spawnServer("storage", {
    wrap: ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups"],
    env: { STORAGE_ROOTS: root },
    // Wherever the checkout is (a 0700 home included), nobody runs a copy it can reach.
    otherUser: true,
  });
});

afterAll(async () => {
  await asNobody?.stop();
  m?.cleanup();
});

describe("unreadable directories", () => {
  it("as nobody: both are skipped and counted, the rest is sized", async () => {
    const client = createClient(asNobody.url);
    const r = await client.call<Answer>("top_consumers", { path: tree, n: 10 });
    // locked: opendir fails (1); listonly: each of its one entry fails lstat (1).
    expect(r.skipped.unreadable).toBe(2);
    expect(r.scanned.bytes).toBe(MIB);
    expect(r.entries[0]).toMatchObject({ name: "open", size_mb: 1 });
    expect(r.truncated).toBe(false);
  });

  it("as root (this test process): chmod does not stop root, everything is counted", async () => {
    const r = await callTool(server, topConsumers, { path: tree, n: 10 }, { env: { STORAGE_ROOTS: root } });
    expect(r.skipped.unreadable).toBe(0);
    expect(r.scanned.bytes).toBe(6 * MIB);
  });
});
