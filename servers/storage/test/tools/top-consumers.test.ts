/**
 * top_consumers on a real tree in a tmpfs mounted here (known allocation: 4 KiB pages), compared with `du`
 * on the same tree: the ranking and every size down to depth 2, hard links once, symlinks never followed
 * (loops, a link to /etc), a nested mount skipped unless one_filesystem is false, sparse files (apparent vs
 * allocated). Then the deadline on 100k files, and every way out of the roots refused.
 */
import { execFileSync } from "node:child_process";
import { linkSync, lstatSync, mkdirSync, symlinkSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { callTool } from "@roadnerd/conventions/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { server } from "../../src/server.ts";
import { topConsumers } from "../../src/tools/top-consumers.ts";
import { du, type ScratchMounts, scratchMounts } from "../helpers/scratch-mounts.ts";
import { cutShort, dirs, fastest, file, MIB, manyFiles, mib, parseDu } from "../helpers/trees.ts";

let m: ScratchMounts;
let root: string;
let tree: string;
let many: string;
let env: Record<string, string>;

beforeAll(() => {
  m = scratchMounts("rn-storage-top-");
  root = m.tmpfs(join(m.base, "root"), "size=512m,mode=755");
  tree = join(root, "tree");
  dirs(tree, "big/sub", "logs", "small", "hard", "links", "nested");
  file(join(tree, "big/blob"), 8 * MIB);
  file(join(tree, "big/sub/part"), 3 * MIB);
  for (let i = 0; i < 5; i++) file(join(tree, `logs/app.${i}.log`), MIB + i * 4096);
  for (let i = 0; i < 100; i++) file(join(tree, `small/s${i}`), 4096);
  file(join(tree, "hard/h1"), 2 * MIB);
  linkSync(join(tree, "hard/h1"), join(tree, "hard/h2"));
  file(join(tree, "top.bin"), 6 * MIB);
  file(join(tree, "sparse"), 0);
  truncateSync(join(tree, "sparse"), 100 * MIB); // 100 MiB long, nothing allocated
  symlinkSync(".", join(tree, "links/self"));
  symlinkSync("..", join(tree, "links/up"));
  symlinkSync(tree, join(tree, "links/abs"));
  symlinkSync("/etc", join(tree, "links/etc"));
  mkdirSync(join(m.base, "outside"));
  file(join(m.base, "outside/secret"), MIB);
  symlinkSync(join(m.base, "outside"), join(tree, "links/out"));
  // Another filesystem inside the tree: not counted unless one_filesystem is false.
  const nested = m.tmpfs(join(tree, "nested/mnt"), "size=16m");
  file(join(nested, "other"), 5 * MIB);
  many = join(root, "many");
  manyFiles(many, 100, 1000);
  env = { STORAGE_ROOTS: root };
});

afterAll(() => m?.cleanup());

const call = (input: Record<string, unknown>, e: Record<string, string> = env) =>
  callTool(server, topConsumers, input, { env: e });

/** du's view of the same tree: directories and regular files down to depth 2, biggest first. */
function duEntries(path: string, depth: number) {
  return parseDu(du(["-x", "-B1", "-a", "-d", String(depth), path]))
    .filter(([, p]) => p !== path)
    .filter(([, p]) => {
      const st = lstatSync(p);
      return st.isDirectory() || st.isFile();
    })
    .map(([bytes, p]) => ({ name: p.slice(path.length + 1), bytes }))
    .sort((a, b) => b.bytes - a.bytes || (a.name < b.name ? -1 : 1));
}

describe("top_consumers", () => {
  it("ranks the tree exactly as du -x -a -d 2 sizes it", async () => {
    const r = await call({ path: tree, depth: 2, n: 100, timeout_ms: 10_000 });
    const expected = duEntries(tree, 2).slice(0, 100);
    // Which name of a hard-linked pair is counted depends on readdir order, for du as for us: compare the rest.
    const plain = (e: { name: string }) => !e.name.startsWith("hard/");
    expect(r.entries.filter(plain).map((e) => [e.name, e.size_mb])).toEqual(
      expected.filter(plain).map((e) => [e.name, mib(e.bytes)]),
    );
    expect(r.entries.slice(0, 4).map((e) => [e.name, e.type, e.size_mb])).toEqual([
      ["big", "dir", 11],
      ["big/blob", "file", 8],
      ["top.bin", "file", 6],
      ["logs", "dir", 5.04],
    ]);
    expect(r.truncated).toBe(false);
    expect(r.path).toBe(tree);
  });

  it("its summary names the three biggest, none inside another (big, not big/blob beside it)", async () => {
    const r = await call({ path: tree, depth: 2, n: 10 });
    expect(r.entries.slice(0, 2).map((e) => e.name)).toEqual(["big", "big/blob"]);
    const named = r.summary
      .replace(/^.*; biggest /, "")
      .split(", ")
      .map((s) => s.replace(/ [\d.]+ MiB$/, ""));
    expect(named).toEqual(["big", "top.bin", "logs"]);
  });

  it("totals like du -sx: hard links once, the nested mount and the symlinks' targets left out", async () => {
    const r = await call({ path: tree, n: 100, timeout_ms: 10_000 });
    const [[duBytes]] = parseDu(du(["-sx", "-B1", tree])) as [[number, string]];
    expect(r.scanned.bytes).toBe(duBytes);
    expect(r.total_mb).toBe(mib(duBytes));
    // 8+3 + 5×1 MiB + 5×4 KiB×(0..4) + 100×4 KiB + 2 (hard link once) + 6 MiB.
    expect(r.scanned.bytes).toBe((8 + 3 + 5 + 2 + 6) * MIB + 40_960 + 409_600);
    expect(r.entries.find((e) => e.name === "hard")?.size_mb).toBe(2);
    expect(r.skipped).toEqual({ unreadable: 0, other_fs: 1, network_fs: 0, vanished: 0, too_deep: 0 });
    // 8 dirs (tree, big, big/sub, logs, small, hard, links, nested); files: everything else, h2 not again.
    expect(r.scanned.dirs).toBe(8);
    expect(r.scanned.files).toBe(1 + 1 + 5 + 100 + 1 + 1 + 1 + 5);
    const few = await call({ path: tree, n: 3 });
    expect(few.entries.map((e) => e.name)).toEqual(["big", "big/blob", "top.bin"]);
  });

  it("reports apparent size beside allocated size (a sparse file)", async () => {
    const r = await call({ path: tree, depth: 1, n: 100, timeout_ms: 10_000 });
    const sparse = r.entries.find((e) => e.name === "sparse");
    expect(sparse).toEqual({ name: "sparse", type: "file", size_mb: 0, apparent_mb: 100 });
    const [[apparent]] = parseDu(du(["-sx", "-B1", "--apparent-size", tree])) as [[number, string]];
    // du --apparent-size counts the hard link once too; directory sizes included on both sides.
    expect(r.apparent_total_mb).toBe(mib(apparent));
  });

  it("goes into the nested filesystem only with one_filesystem: false", async () => {
    const r = await call({ path: tree, depth: 2, n: 100, one_filesystem: false, timeout_ms: 10_000 });
    expect(r.entries.find((e) => e.name === "nested/mnt")).toMatchObject({ type: "dir", size_mb: 5 });
    expect(r.skipped.other_fs).toBe(0);
    const [[duBytes]] = parseDu(du(["-s", "-B1", tree])) as [[number, string]];
    expect(r.scanned.bytes).toBe(duBytes);
  });

  it("never follows a symlink: loops, .., an absolute link back and /etc cost nothing", async () => {
    const r = await call({ path: join(tree, "links"), depth: 2, n: 100 });
    expect(r.entries).toEqual([]);
    expect(r.scanned).toMatchObject({ dirs: 1, files: 5 });
  });

  it("stops at its deadline on 100k files and answers with what it has", async () => {
    // Whole walks first (they also start the walker children, as a cut walk would find them); then a timeout
    // that leaves the walk a quarter of the fastest. What it has: the first slice always runs (at least 64
    // entries, here the top directories), however little of the deadline a loaded machine left it.
    let full: Awaited<ReturnType<typeof call>> | undefined;
    const whole = await fastest(2, async () => {
      full = await call({ path: many, timeout_ms: 15_000, n: 2 });
    });
    expect(full?.truncated).toBe(false);
    expect(full?.scanned).toMatchObject({ files: 100_000, dirs: 101 });
    const r = await call({ path: many, timeout_ms: cutShort(whole) });
    expect(r.truncated).toBe(true);
    expect(r.entries.length).toBeGreaterThan(0);
    expect(r.scanned.files).toBeLessThan(100_000);
    expect(r.summary).toContain("partial");
  });

  it("walks through a root that is a symlink, and answers the real path", async () => {
    const link = join(m.base, "root-link");
    symlinkSync(root, link);
    const r = await call({ path: join(link, "tree/big"), n: 2 }, { STORAGE_ROOTS: link });
    expect(r.path).toBe(join(tree, "big"));
    expect(r.entries.map((e) => e.name)).toEqual(["blob", "sub"]);
  });

  describe("refuses every way out of the roots", () => {
    const forbidden = () => [
      "/etc",
      "/proc",
      "/sys",
      "/proc/self/root",
      "/",
      `${root}/../outside`,
      `${root}/tree/../../outside`,
      join(tree, "links/etc"),
      join(tree, "links/out"),
      `${root}x`,
    ];
    it.each([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])("forbidden #%i", async (i) => {
      const path = forbidden()[i] as string;
      await expect(call({ path }), path).rejects.toMatchObject({ code: "E_FORBIDDEN" });
    });

    it("/tmp/../etc with /tmp allowed, and /proc even when / is a root", async () => {
      await expect(call({ path: "/tmp/../etc" }, { STORAGE_ROOTS: "/tmp" })).rejects.toMatchObject({
        code: "E_FORBIDDEN",
      });
      await expect(call({ path: "/proc/1" }, { STORAGE_ROOTS: "/" })).rejects.toMatchObject({ code: "E_FORBIDDEN" });
      await expect(call({ path: "/sys/kernel" }, { STORAGE_ROOTS: "/" })).rejects.toMatchObject({
        code: "E_FORBIDDEN",
      });
    });

    it("relative paths, NUL bytes, missing paths and files are invalid input", async () => {
      for (const path of ["../etc", "tree", "./", "", `${tree}\u0000/x`, join(tree, "nope"), join(tree, "top.bin")]) {
        await expect(call({ path }), JSON.stringify(path)).rejects.toMatchObject({ code: "E_INVALID_INPUT" });
      }
    });

    it("a refusal outside the roots says nothing about whether the path exists", async () => {
      const a = await call({ path: "/etc/passwd" }).catch((e: Error) => e.message);
      const b = await call({ path: "/etc/no-such-file-here" }).catch((e: Error) => e.message);
      expect(a).toBe("/etc/passwd is outside the directories this server may walk");
      expect(b).toBe("/etc/no-such-file-here is outside the directories this server may walk");
    });
  });

  it("refuses bad input with E_INVALID_INPUT", async () => {
    const bad: Record<string, unknown>[] = [
      {},
      { path: 42 },
      { path: tree, depth: 0 },
      { path: tree, depth: 6 },
      { path: tree, n: 0 },
      { path: tree, n: 101 },
      { path: tree, depth: 1.5 },
      { path: tree, one_filesystem: "no" },
      { path: tree, follow: true },
    ];
    for (const input of bad) {
      await expect(call(input), JSON.stringify(input)).rejects.toMatchObject({ code: "E_INVALID_INPUT" });
    }
  });
});

describe("a tree deeper than PATH_MAX", () => {
  it("counts what it can reach and says the sizes are lower bounds (too_deep, truncated)", async () => {
    const deep = join(root, "deep");
    mkdirSync(deep);
    // 25 levels of 200-character names: past PATH_MAX (4096), built relative to each level (as a shell can).
    const level = "d".repeat(200);
    const build = `const fs = require("node:fs"); process.chdir(process.argv[1]);
      for (let i = 0; i < 25; i++) { fs.mkdirSync("${level}"); process.chdir("${level}"); }
      fs.writeFileSync("bottom", Buffer.alloc(65536));`;
    // A child process: chdir is per process, and relative steps go past PATH_MAX where absolute paths cannot.
    execFileSync(process.execPath, ["-e", build, deep]);
    try {
      const r = await callTool(server, topConsumers, { path: deep, depth: 1 }, { env });
      expect(r.skipped.too_deep).toBeGreaterThan(0);
      expect(r.truncated).toBe(true);
      expect(r.scanned.dirs).toBeGreaterThan(15);
      expect(r.scanned.dirs).toBeLessThan(26);
    } finally {
      execFileSync("/bin/rm", ["-rf", deep]);
    }
  });
});
