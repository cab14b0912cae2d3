/** Path resolution inside a root, as chroot does it, over real symlinks: never a byte from outside. */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { rename, symlink } from "node:fs/promises";
import { afterEach, describe, expect, it, vi } from "vitest";
import { keptReads, LIST_AT_MOST, listInRoot, readInRoot } from "../../src/fs/read-bounded.ts";
import {
  COMPONENTS_AT_MOST,
  DEPTH_AT_MOST,
  holdInRoot,
  resolveInRoot,
  TURN_COMPONENTS_AT_MOST,
  TURN_DIRS_AT_MOST,
  TURN_LINK_BYTES_AT_MOST,
} from "../../src/fs/root-path.ts";
import { keepable, MAX_AGE_MS, SETTLED_MS } from "../../src/fs/settled-cache.ts";
import { type BuiltRoot, buildRoot, type RootSpec } from "../helpers/build-root.ts";

const roots: BuiltRoot[] = [];
afterEach(async () => {
  for (const r of roots.splice(0)) await r.remove();
});

async function rootOf(spec: RootSpec): Promise<string> {
  const r = await buildRoot(spec);
  roots.push(r);
  return r.dir;
}

describe("resolveInRoot", () => {
  it("follows relative and absolute links, each hop recorded", async () => {
    const root = await rootOf({
      "etc/resolv.conf": { link: "/etc/resolvconf/run/resolv.conf" },
      "etc/resolvconf/run": { link: "../../run/resolvconf" },
      "run/resolvconf/resolv.conf": "nameserver 192.0.2.1\n",
    });
    const at = await resolveInRoot(root, "/etc/resolv.conf");
    expect(at).toEqual({
      path: "/run/resolvconf/resolv.conf",
      hostPath: `${root}/run/resolvconf/resolv.conf`,
      links: [
        { link: "/etc/resolv.conf", target: "/etc/resolvconf/run/resolv.conf" },
        { link: "/etc/resolvconf/run", target: "../../run/resolvconf" },
      ],
      climbed: false,
    });
  });

  it("a directory link that climbs out through .. is held at the root", async () => {
    const root = await rootOf({
      "etc/resolv.conf": { link: "../run/escape/hostname" },
      "run/escape": { link: "../../../../../../etc" },
      "etc/hostname": "inside\n",
    });
    const file = await readInRoot(root, "/etc/resolv.conf");
    expect(file.at.path).toBe("/etc/hostname");
    expect(file.at.climbed).toBe(true);
    expect(file.text).toBe("inside\n");
  });

  it("an absolute link to a host file that the root lacks is missing, not the host's", async () => {
    const root = await rootOf({ "etc/resolv.conf": { link: "/etc/hostname" } });
    const file = await readInRoot(root, "/etc/resolv.conf");
    expect(file).toMatchObject({ error: "missing", cut: false });
    expect(file.text).toBeUndefined();
    expect(file.at.hostPath).toBe(`${root}/etc/hostname`);
  });

  it("a loop stops after 40 hops; a file used as a directory is not_a_directory", async () => {
    const root = await rootOf({
      "etc/resolv.conf": { link: "loop" },
      "etc/loop": { link: "resolv.conf" },
      "etc/file": "x",
    });
    const loop = await resolveInRoot(root, "/etc/resolv.conf");
    expect(loop.problem).toBe("loop");
    expect(loop.links).toHaveLength(40);
    expect((await resolveInRoot(root, "/etc/file/x")).problem).toBe("not_a_directory");
  });

  it("reads at most the bound and says so", async () => {
    const root = await rootOf({ "etc/big": "a".repeat(100) });
    expect(await readInRoot(root, "/etc/big", 10)).toMatchObject({ text: "aaaaaaaaaa", cut: true });
    expect(await readInRoot(root, "/etc/big", 100)).toMatchObject({ cut: false });
  });
});

// The root `/` is walked by plain paths, no descriptors held (root-path.ts): the same answers as a mounted root,
// over a tree built under the temp directory (absolute links written with its prefix).
describe("resolveInRoot under the root /", () => {
  it("follows relative and absolute links, each hop recorded, and reads through them", async () => {
    const t = await rootOf({
      "run/resolvconf/resolv.conf": "nameserver 192.0.2.1\n",
      "etc/file": "x",
      "etc/resolvconf/run": { link: "../../run/resolvconf" },
    });
    await symlink(`${t}/etc/resolvconf/run/resolv.conf`, `${t}/etc/resolv.conf`);
    const file = await readInRoot("/", `${t}/etc/resolv.conf`);
    expect(file.text).toBe("nameserver 192.0.2.1\n");
    expect(file.at).toEqual({
      path: `${t}/run/resolvconf/resolv.conf`,
      hostPath: `${t}/run/resolvconf/resolv.conf`,
      links: [
        { link: `${t}/etc/resolv.conf`, target: `${t}/etc/resolvconf/run/resolv.conf` },
        { link: `${t}/etc/resolvconf/run`, target: "../../run/resolvconf" },
      ],
      climbed: false,
    });
    expect((await resolveInRoot("/", `${t}/etc/file/x`)).problem).toBe("not_a_directory");
    expect((await resolveInRoot("/", `${t}/etc/nothing`)).problem).toBe("missing");
    expect(await listInRoot("/", `${t}/run/resolvconf`)).toEqual(["resolv.conf"]);
    expect(await listInRoot("/", `${t}/etc/resolv.conf`)).toEqual([]);
  });

  it("a loop stops after 40 hops; a FIFO is not a file; `..` above / stays at /", async () => {
    const t = await rootOf({ "etc/loop": { link: "loop2" }, "etc/loop2": { link: "loop" } });
    const loop = await resolveInRoot("/", `${t}/etc/loop`);
    expect(loop.problem).toBe("loop");
    expect(loop.links).toHaveLength(40);
    execFileSync("mkfifo", [`${t}/etc/fifo`]);
    expect(await readInRoot("/", `${t}/etc/fifo`)).toMatchObject({ error: "not_a_file", cut: false });
    const depth = t.split("/").length + 3;
    const up = await readInRoot("/", `${t}/etc/${"../".repeat(depth)}${t.slice(1)}/etc/loop2`);
    expect(up.at.climbed).toBe(true);
    expect(up.error).toBe("loop");
  });
});

// Directories are looked up once a turn of the event loop (root-path.ts): never remembered into the next turn,
// and every descriptor closed when the turn's table is swept.
describe("the turn's table of directories", () => {
  const openFds = () => readdirSync("/proc/self/fd").length;
  const nextTurn = () => new Promise((r) => setImmediate(r));

  it("a directory swapped between turns is looked up again, and no descriptor is left open", async () => {
    const root = await rootOf({ "run/a/file": "first\n", "run/b/file": "second\n" });
    await nextTurn();
    const before = openFds();
    expect((await readInRoot(root, "/run/a/file")).text).toBe("first\n");
    expect(openFds()).toBeGreaterThan(before); // /run and /run/a held for the turn
    await nextTurn();
    expect(openFds()).toBe(before);
    // /run/a becomes a link to /run/b: the next turn follows the link, not a descriptor of the old directory.
    await rename(`${root}/run/a`, `${root}/run/old`);
    await symlink("b", `${root}/run/a`);
    const again = await readInRoot(root, "/run/a/file");
    expect(again.text).toBe("second\n");
    expect(again.at.links).toEqual([{ link: "/run/a", target: "b" }]);
    await nextTurn();
    expect(openFds()).toBe(before);
  });

  it("a name missing, or a link read, is not looked up again in the same turn; the next turn looks again", async () => {
    const root = await rootOf({ "etc/a": "a\n", "etc/b": "b\n", "etc/link": { link: "a" } });
    // Under a mounted root and under / (the same files, reached by their host path).
    for (const [inRoot, base] of [
      [root, ""],
      ["/", root],
    ] as const) {
      await nextTurn();
      expect((await resolveInRoot(inRoot, `${base}/etc/new`)).problem).toBe("missing");
      expect((await resolveInRoot(inRoot, `${base}/etc/link`)).path).toBe(`${base}/etc/a`);
      writeFileSync(`${root}/etc/new`, "new\n");
      unlinkSync(`${root}/etc/link`);
      symlinkSync("b", `${root}/etc/link`);
      // The same turn: what the call saw a moment ago (every lookup still bounded and inside the root).
      expect((await resolveInRoot(inRoot, `${base}/etc/new`)).problem).toBe("missing");
      expect((await resolveInRoot(inRoot, `${base}/etc/new/deeper`)).problem).toBe("missing");
      const link = await resolveInRoot(inRoot, `${base}/etc/link`);
      expect(link.path).toBe(`${base}/etc/a`);
      expect(link.links).toEqual([{ link: `${base}/etc/link`, target: "a" }]);
      await nextTurn();
      expect((await readInRoot(inRoot, `${base}/etc/new`)).text).toBe("new\n");
      expect((await readInRoot(inRoot, `${base}/etc/link`)).text).toBe("b\n");
      unlinkSync(`${root}/etc/new`);
      unlinkSync(`${root}/etc/link`);
      symlinkSync("a", `${root}/etc/link`);
    }
  });

  it("remembers link targets up to TURN_LINK_BYTES_AT_MOST a turn; past it, a link is read again when met again", async () => {
    // Targets of ~4 KiB each ("./" repeated, then the file): 80 of them are past the bound.
    const long = (file: string) => `${"./".repeat(2000)}${file}`;
    const spec: RootSpec = { "d/a": "a\n", "d/b": "b\n" };
    for (let i = 0; i < 80; i++) spec[`d/l${i}`] = { link: long("a") };
    const root = await rootOf(spec);
    await nextTurn();
    for (let i = 0; i < 80; i++) expect((await resolveInRoot(root, `/d/l${i}`)).path).toBe("/d/a");
    expect(80 * long("a").length).toBeGreaterThan(TURN_LINK_BYTES_AT_MOST);
    for (const i of [0, 79]) {
      unlinkSync(`${root}/d/l${i}`);
      symlinkSync(long("b"), `${root}/d/l${i}`);
    }
    // The same turn: the first link's target was remembered, the last one's (past the bound) was not.
    expect((await resolveInRoot(root, "/d/l0")).path).toBe("/d/a");
    expect((await resolveInRoot(root, "/d/l79")).path).toBe("/d/b");
    await nextTurn();
    expect((await resolveInRoot(root, "/d/l0")).path).toBe("/d/b");
  });

  it("a held path outlives the sweep until it is closed", async () => {
    const root = await rootOf({ "etc/x/y": "held\n" });
    await nextTurn();
    const before = openFds();
    const held = await holdInRoot(root, "/etc/x/y");
    await nextTurn();
    // Swept, but the directory it ends in is still open for it.
    expect(readFileSync(`${held.dir}/${held.name}`, "utf8")).toBe("held\n");
    await held.close();
    expect(openFds()).toBe(before);
  });
});

// Stop 33's review: a planted tree of directories left by `..` at every step held a descriptor for each until
// the turn ended (20,000: the process's limit). The table is bounded; past it a walk closes what it leaves.
/** One lookup without leaving the turn (resolveInRoot awaits nothing real either: this only names it). */
const holdAndClose = async (root: string, path: string) => {
  const held = await holdInRoot(root, path);
  await held.close();
  return held.at;
};

describe("a walk's descriptors, bounded", () => {
  const openFds = () => readdirSync("/proc/self/fd").length;

  it("holds at most TURN_DIRS_AT_MOST directories in a turn, however many a path goes through", async () => {
    const names = Array.from({ length: 400 }, (_, i) => `d${String(i).padStart(3, "0")}`);
    const spec: Record<string, string | { link: string } | { dir: true }> = { "x/file": "nameserver 192.0.2.9\n" };
    for (const n of names) spec[n] = { dir: true };
    spec["etc/resolv.conf"] = { link: `/${names.map((n) => `${n}/..`).join("/")}/x/file` };
    const root = await rootOf(spec);
    await new Promise((r) => setImmediate(r));
    const before = openFds();
    const file = await readInRoot(root, "/etc/resolv.conf");
    // Still this turn: the table's directories are open, the rest were closed as the walk left them.
    const during = openFds() - before;
    expect(file.text).toBe("nameserver 192.0.2.9\n");
    expect(during).toBeGreaterThan(0);
    expect(during).toBeLessThanOrEqual(TURN_DIRS_AT_MOST + 2);
    expect(during).toBeLessThan(names.length); // not one a directory gone through
    await new Promise((r) => setImmediate(r));
    expect(openFds()).toBe(before);
  });

  it("bounds what one turn's lookups go through, and how deep a path may lead (stop 33's second review)", async () => {
    const deep = Array.from({ length: DEPTH_AT_MOST + 2 }, () => "d").join("/");
    const root = await rootOf({ [`${deep}/file`]: "x", "a/file": "y" });
    expect((await resolveInRoot(root, `/${deep}/file`)).problem).toBe("loop");
    await new Promise((r) => setImmediate(r));
    // Lookups of ~1,000 components each, in one turn: past the turn's bound every further one is a loop...
    const bouncing = `/${Array.from({ length: 500 }, () => "a/..").join("/")}/a/file`;
    const problems: Array<string | undefined> = [];
    for (let i = 0; i < Math.ceil(TURN_COMPONENTS_AT_MOST / 1000) + 2; i++) {
      problems.push((await holdAndClose(root, bouncing)).problem);
    }
    expect(problems[0]).toBeUndefined();
    expect(problems.at(-1)).toBe("loop");
    // ...and the next turn starts afresh.
    await new Promise((r) => setImmediate(r));
    expect((await resolveInRoot(root, bouncing)).problem).toBeUndefined();
  });

  it("a listing reads at most LIST_AT_MOST names, however many a directory holds (stop 34's review)", async () => {
    const root = await rootOf({ "run/links/0": "" });
    for (let i = 1; i < LIST_AT_MOST + 100; i++) writeFileSync(`${root}/run/links/${i}`, "");
    const names = await listInRoot(root, "/run/links", 10 * LIST_AT_MOST);
    expect(names).toHaveLength(LIST_AT_MOST);
    expect(names).toEqual([...names].sort());
    expect(await listInRoot(root, "/run/links")).toHaveLength(64);
  });

  it("calls a path of more than COMPONENTS_AT_MOST components a loop", async () => {
    const root = await rootOf({ "a/file": "x" });
    const long = `/${Array.from({ length: COMPONENTS_AT_MOST }, () => "a/..").join("/")}/a/file`;
    expect((await resolveInRoot(root, long)).problem).toBe("loop");
    expect((await resolveInRoot(root, "/a/../a/file")).problem).toBeUndefined();
  });
});

// settled-cache.ts: a file or listing is given back while the walk's lstat says it is unchanged. Files made by a
// test are seconds old at most, so the tests' clock (Date only) runs ahead for the cache to keep them.
describe("files and listings kept while unchanged", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("is not read again while unchanged; a change of the same size, a rename over it, a new name: seen at once", async () => {
    const root = await rootOf({ "etc/resolv.conf": "nameserver 192.0.2.1\n", "run/links/1": "DNS=192.0.2.9\n" });
    for (const [inRoot, base] of [
      [root, ""],
      ["/", root],
    ] as const) {
      vi.useFakeTimers({ toFake: ["Date", "performance"], now: Date.now() + 10 * SETTLED_MS });
      const conf = `${base}/etc/resolv.conf`;
      const kept = keptReads();
      expect((await readInRoot(inRoot, conf)).text).toBe("nameserver 192.0.2.1\n");
      expect((await readInRoot(inRoot, conf)).text).toBe("nameserver 192.0.2.1\n");
      expect(keptReads()).toBe(kept + 1);
      // Given back for MAX_AGE_MS at most (a write through a shared mapping may leave the times as they were).
      vi.advanceTimersByTime(MAX_AGE_MS);
      expect((await readInRoot(inRoot, conf)).text).toBe("nameserver 192.0.2.1\n");
      expect(keptReads()).toBe(kept + 1);
      expect((await readInRoot(inRoot, conf)).text).toBe("nameserver 192.0.2.1\n");
      expect(keptReads()).toBe(kept + 2);
      writeFileSync(`${root}/etc/resolv.conf`, "nameserver 192.0.2.2\n");
      expect((await readInRoot(inRoot, conf)).text).toBe("nameserver 192.0.2.2\n");
      writeFileSync(`${root}/etc/new`, "nameserver 192.0.2.3\n");
      await rename(`${root}/etc/new`, `${root}/etc/resolv.conf`);
      expect((await readInRoot(inRoot, conf)).text).toBe("nameserver 192.0.2.3\n");
      expect(await listInRoot(inRoot, `${base}/run/links`)).toEqual(["1"]);
      expect(await listInRoot(inRoot, `${base}/run/links`)).toEqual(["1"]);
      expect(keptReads()).toBe(kept + 3);
      writeFileSync(`${root}/run/links/2`, "");
      expect(await listInRoot(inRoot, `${base}/run/links`)).toEqual(["1", "2"]);
      unlinkSync(`${root}/run/links/2`);
      writeFileSync(`${root}/etc/resolv.conf`, "nameserver 192.0.2.1\n");
      vi.useRealTimers();
    }
  });

  it("keeps nothing changed within SETTLED_MS of the read, nor anything under /proc or /sys", async () => {
    const root = await rootOf({ "etc/hosts": "127.0.0.1 localhost\n", "sys/class/net/lo/ifindex": "1\n" });
    const kept = keptReads();
    for (let i = 0; i < 3; i++) expect((await readInRoot(root, "/etc/hosts")).text).toBe("127.0.0.1 localhost\n");
    expect(keptReads()).toBe(kept);
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 10 * SETTLED_MS });
    for (let i = 0; i < 3; i++) expect((await readInRoot(root, "/sys/class/net/lo/ifindex")).text).toBe("1\n");
    expect(await listInRoot(root, "/sys/class/net")).toEqual(["lo"]);
    expect(await listInRoot(root, "/sys/class/net")).toEqual(["lo"]);
    expect(keptReads()).toBe(kept);
    expect(keepable("/proc/net/route")).toBe(false);
    expect(keepable("/system/x")).toBe(true);
  });
});
