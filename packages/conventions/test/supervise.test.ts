/**
 * superviseListening with real node children: the listening line, a scrubbed env, a child that exits or
 * never listens (killed, typed phase), stop() killing the whole group (grandchild included), exit notice.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { liveSupervised, SuperviseError, superviseListening } from "../src/process/supervise.ts";
import { isLive } from "../src/testing/procfs.ts";

let dir: string;
const node = process.execPath;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rn-supervise-"));
  // Listens on 127.0.0.1:0, reports its env, and starts a grandchild that would outlive a plain kill.
  await writeFile(
    join(dir, "listener.mjs"),
    `import { createServer } from "node:http";
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
const g = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
writeFileSync(process.env.GRANDCHILD_FILE, String(g.pid));
const s = createServer((_q, r) => r.end(JSON.stringify({ secret: process.env.SECRET ?? null, lc: process.env.LC_ALL })));
s.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ msg: "listening", url: "http://127.0.0.1:" + s.address().port })));
`,
  );
  await writeFile(join(dir, "silent.mjs"), "setInterval(() => {}, 1000);\n");
  await writeFile(join(dir, "dies.mjs"), "console.error('boom: bad config'); process.exit(3);\n");
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("superviseListening", () => {
  it("resolves with the url, scrubs the env, and stop() kills the whole group", async () => {
    process.env.SECRET = "from-parent";
    const grandFile = join(dir, "grandchild.pid");
    const exits: unknown[] = [];
    const child = await superviseListening([node, join(dir, "listener.mjs")], {
      env: { GRANDCHILD_FILE: grandFile },
      onExit: (e) => exits.push(e),
    });
    delete process.env.SECRET;
    try {
      expect(child.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const body = (await (await fetch(child.url)).json()) as { secret: string | null; lc: string };
      expect(body).toEqual({ secret: null, lc: "C" });
      expect(child.alive()).toBe(true);
      expect(liveSupervised()).toBe(1);
    } finally {
      await child.stop(500);
    }
    const grandchild = Number(await readFile(grandFile, "utf8"));
    expect(child.alive()).toBe(false);
    expect(isLive(child.pid)).toBe(false);
    // The group got its SIGKILL when the leader went; a loaded machine may take a moment to run the death.
    for (let i = 0; i < 200 && isLive(grandchild); i++) await new Promise((r) => setTimeout(r, 25));
    expect(isLive(grandchild)).toBe(false);
    expect(exits).toEqual([{ code: null, signal: "SIGTERM" }]);
    expect(liveSupervised()).toBe(0);
  });

  it("a child that exits before listening is a typed 'exit' error carrying its stderr", async () => {
    const err = await superviseListening([node, join(dir, "dies.mjs")]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SuperviseError);
    expect((err as SuperviseError).phase).toBe("exit");
    expect((err as SuperviseError).message).toContain("boom: bad config");
    expect(liveSupervised()).toBe(0);
  });

  it("a child that never listens is killed after the timeout ('timeout')", async () => {
    const exits: unknown[] = [];
    const err = await superviseListening([node, join(dir, "silent.mjs")], {
      listenTimeoutMs: 300,
      onExit: (e) => exits.push(e),
    }).catch((e: unknown) => e);
    expect((err as SuperviseError).phase).toBe("timeout");
    // Its exit is reported once it has been reaped (bounded wait: a loaded machine may take a while).
    for (let i = 0; i < 300 && exits.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(exits).toHaveLength(1);
    expect(liveSupervised()).toBe(0);
  });

  it("a binary that does not exist is a 'spawn' error", async () => {
    const err = await superviseListening([join(dir, "no-such-binary")]).catch((e: unknown) => e);
    expect((err as SuperviseError).phase).toBe("spawn");
  });
});
