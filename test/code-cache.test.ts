/**
 * A server starts from the V8 code cache of a start (ADR 0062): the launcher with a bundle of the test's own,
 * then every server `pnpm build` built.
 */
import { execFile, execFileSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { promisify } from "node:util";
import type { BuildOptions } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeCacheFits, codeCachePath } from "../packages/conventions/src/process/launch-bundle.ts";
import { REPO_ROOT, selectedServers } from "../packages/registry/src/read-registry.ts";
import { asciiOnly, buildAscii } from "../scripts/lib/ascii-only.ts";
import { SERVER_BUNDLE_OPTIONS } from "../scripts/lib/bundle-options.ts";
import { buildServerDist, writeServerLauncher } from "../scripts/lib/server-launcher.ts";

const run = promisify(execFile);

// A bundle as esbuild writes one: CommonJS, a builtin by require, a dynamic import (which a vm.Script needs
// the launcher's loader for), its own file and directory.
const APP = `const { createHash } = require("node:crypto");
function digest(n) { const h = createHash("sha256"); for (let i = 0; i < n; i++) h.update(String(i)); return h.digest("hex").slice(0, 12); }
import("node:os").then((os) => {
  process.stdout.write(JSON.stringify({ digest: digest(100), file: __filename, dir: __dirname, same: module.exports === exports, cpus: typeof os.cpus, argv: process.argv.slice(2) }));
});
`;

async function start(main: string, cache: string, nodeArgs: string[] = []) {
  const { stdout, stderr } = await run(process.execPath, [...nodeArgs, main, "--x"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ROADNERD_CODE_CACHE: cache },
    timeout: 60_000,
  });
  return { out: JSON.parse(stdout) as Record<string, unknown>, state: /code cache: (\w+)/.exec(stderr)?.[1] };
}

describe("the launcher", () => {
  let dir: string;
  let main: string;
  let cacheFile: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "rn-code-cache-"));
    writeFileSync(join(dir, "app.cjs"), APP);
    await writeServerLauncher(dir);
    main = join(dir, "main.js");
    cacheFile = codeCachePath(join(dir, "app.cjs"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("runs the bundle as the main CommonJS module, then uses the cache a start wrote at its exit", async () => {
    const expected = {
      digest: expect.stringMatching(/^[0-9a-f]{12}$/),
      file: join(dir, "app.cjs"),
      dir,
      same: true,
      cpus: "function",
      argv: ["--x"],
    };
    const first = await start(main, "report");
    expect(first).toEqual({ out: expected, state: "absent" });
    await start(main, "write");
    expect(readFileSync(cacheFile).length).toBeGreaterThan(1000);
    const warm = await start(main, "report");
    expect(warm).toEqual({ out: first.out, state: "accepted" });
    // The bench's cold start: the cache is there and not read.
    expect((await start(main, "off")).out).toEqual(first.out);
  });

  it("compiles from source when V8 refuses the cache (other flags) or its bytes are damaged", async () => {
    await start(main, "write");
    const good = readFileSync(cacheFile);
    const other = await start(main, "report", ["--stack-size=900"]);
    expect(other.state).toBe("rejected");
    const damaged = Buffer.from(good);
    for (let i = damaged.length >> 1; i < (damaged.length >> 1) + 64; i++) damaged[i] = (damaged[i] ?? 0) ^ 0x5a;
    writeFileSync(cacheFile, damaged);
    // V8 alone would take these bytes and abort the process.
    const after = await start(main, "report");
    expect(after.state).toBe("damaged");
    expect(after.out).toEqual(other.out);
    writeFileSync(cacheFile, good.subarray(0, 20));
    expect((await start(main, "report")).state).toBe("damaged");
    // Something other than a file in its place: neither read forever (a device) nor waited on (a FIFO).
    rmSync(cacheFile);
    symlinkSync("/dev/zero", cacheFile);
    expect((await start(main, "report")).state).toBe("damaged");
    rmSync(cacheFile);
    execFileSync("mkfifo", [cacheFile]);
    expect((await start(main, "report")).state).toBe("damaged");
    rmSync(cacheFile);
    mkdirSync(cacheFile);
    expect((await start(main, "report")).state).toBe("damaged");
    rmSync(cacheFile, { recursive: true });
  });

  it("says in one line when it cannot write the cache it was asked for (exit 1), or has no bundle (exit 2)", async () => {
    // A directory where the cache goes: the rename fails, even for root.
    rmSync(cacheFile, { force: true, recursive: true });
    mkdirSync(join(cacheFile, "x"), { recursive: true });
    const failed = await run(process.execPath, [main], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ROADNERD_CODE_CACHE: "write" },
    }).catch((err: { code: number; stderr: string; stdout: string }) => err);
    expect(failed).toMatchObject({ code: 1, stderr: expect.stringMatching(/^code cache not written: .+$/m) });
    expect(JSON.parse((failed as { stdout: string }).stdout).digest).toMatch(/^[0-9a-f]{12}$/);
    rmSync(cacheFile, { recursive: true });
    const bare = mkdtempSync(join(tmpdir(), "rn-code-cache-missing-"));
    try {
      await writeServerLauncher(bare);
      const missing = await run(process.execPath, [join(bare, "main.js")], { env: {} }).catch(
        (err: { code: number; stderr: string }) => err,
      );
      expect(missing).toMatchObject({
        code: 2,
        stderr: `cannot read ${join(bare, "app.cjs")} (ENOENT): run \`pnpm build\`\n`,
      });
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });

  it("does not take a cache made for another bundle of the same length (V8 checks only the length)", async () => {
    await start(main, "write");
    const app = join(dir, "app.cjs");
    const original = readFileSync(app, "utf8");
    const before = await start(main, "report");
    expect(before.state).toBe("accepted");
    writeFileSync(app, original.replace("digest(100)", "digest(101)"));
    try {
      const edited = await start(main, "report");
      expect(edited.state).toBe("damaged");
      expect(edited.out.digest).not.toBe(before.out.digest);
      expect(edited.out).toEqual((await start(main, "off")).out);
    } finally {
      writeFileSync(app, original);
    }
  });
});

describe("asciiOnly", () => {
  it("escapes what is above ASCII and keeps its meaning in strings, templates and regular expressions", () => {
    const code = 'return ["a—b 😀", `x‘y`, /["‘“]/.test("“"), /^😀$/u.test("😀"), /^😀$/.test("😀")]; // a – comment';
    const escaped = asciiOnly(code);
    expect([...escaped].every((c) => c.charCodeAt(0) < 0x80)).toBe(true);
    expect(new Function(escaped)()).toEqual(["a—b 😀", "x‘y", true, true, true]);
    expect(new Function(code)()).toEqual(new Function(escaped)());
  });

  it("keeps an escaped character itself, and a run of escaped backslashes before one", () => {
    const code =
      'return [/password=[\\“"]([^\\”"]*)/.exec("password=“hunter2”")?.[1], /[\\–\\—]/.test("—"), "\\“", "\\\\“", /\\\\“/.test("\\\\“")];';
    const escaped = asciiOnly(code);
    expect([...escaped].every((c) => c.charCodeAt(0) < 0x80)).toBe(true);
    expect(new Function(code)()).toEqual(["hunter2", true, "“", "\\“", true]);
    expect(new Function(escaped)()).toEqual(new Function(code)());
  });
});

describe("the orchestrator's compile cache", () => {
  it("stays inside its dist, under a path with a space and a non-ASCII character too", async () => {
    const parent = mkdtempSync(join(tmpdir(), "rn-orchestrator-"));
    try {
      const dist = join(parent, "rn co josé", "dist");
      cpSync(join(REPO_ROOT, "packages/orchestrator/dist"), dist, { recursive: true });
      rmSync(join(dist, ".compile-cache"), { recursive: true, force: true });
      const { stdout } = await run(process.execPath, [join(dist, "main.js"), "--version"], { env: {} });
      expect(stdout).toMatch(/^roadnerd /);
      expect(readdirSync(join(dist, ".compile-cache")).length).toBeGreaterThan(0);
      // Before, the percent-encoded URL path made a new tree beside the checkout: rn%20co%20jos%C3%A9/.
      expect(readdirSync(parent)).toEqual(["rn co josé"]);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });
});

describe("every server pnpm build built", () => {
  it.each(selectedServers().map((s) => [s.name, s.dir] as const))(
    "%s: its bundle is ASCII and its start uses the cache the build wrote with this Node",
    async (_name, serverDir) => {
      const dist = join(REPO_ROOT, serverDir, "dist");
      const bundle = readFileSync(join(dist, "app.cjs"));
      expect(
        bundle.findIndex((b) => b > 0x7f),
        "first byte above ASCII",
      ).toBe(-1);
      // The Node that built it wrote one; another Node (the suite on Node 26 over a Node 24 build) has none.
      expect(readdirSync(dist).filter((f) => f.endsWith(".v8cache")).length).toBeGreaterThan(0);
      const ours = existsSync(codeCachePath(join(dist, "app.cjs")));
      const { stderr, stdout } = await run(process.execPath, [join(dist, "main.js"), "--help"], {
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ROADNERD_CODE_CACHE: "report" },
        timeout: 60_000,
      });
      expect(stdout).toMatch(/^roadnerd-/);
      expect(stderr).toContain(ours ? "code cache: accepted" : "code cache: absent");
    },
  );
});

describe("a server's dist/ built again", () => {
  let dir: string;
  let entry: string;
  const nodePaths = [join(REPO_ROOT, "packages/conventions/node_modules")];
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "rn-dist-again-"));
    entry = join(dir, "app.mjs");
    cpSync(join(REPO_ROOT, "scripts/bench/bare-app.mjs"), entry);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps a cache made from the same bundle, trains again for a new one, and drops what no build makes", async () => {
    const outdir = join(dir, "dist");
    const cache = codeCachePath(join(outdir, "app.cjs"));
    expect(await buildServerDist(entry, outdir, { nodePaths })).toBeUndefined();
    const first = statSync(cache).mtimeMs;
    writeFileSync(join(outdir, "app.js"), "// an older build's file\n");
    // The same source: nothing to train (the cache file is not written again), the stray file gone.
    expect(await buildServerDist(entry, outdir, { nodePaths })).toBeUndefined();
    expect(statSync(cache).mtimeMs).toBe(first);
    expect(readdirSync(outdir).sort()).toEqual(["app.cjs", basename(cache), "main.js", "package.json"].sort());
    // A changed source: a new bundle, its old cache replaced by one made from it.
    writeFileSync(entry, `${readFileSync(entry, "utf8")}\nglobalThis.rnBuiltAgain = 1;\n`);
    expect(await buildServerDist(entry, outdir, { nodePaths })).toBeUndefined();
    expect(readFileSync(join(outdir, "app.cjs"), "utf8")).toContain("rnBuiltAgain");
    expect(statSync(cache).mtimeMs).not.toBe(first);
    expect(codeCacheFits(join(outdir, "app.cjs"))).toBe(true);
  }, 120_000);
});

describe("a stack from a server's minified bundle", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "rn-unminify-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** `lines` as a server's bundle is built (minified, its map beside it) into `dir`/`name`, started once. */
  async function buildAndRun(name: string, lines: string[], options: Pick<BuildOptions, "nodePaths"> = {}) {
    const entry = join(dir, `${name}.ts`);
    writeFileSync(entry, [...lines, ""].join("\n"));
    const outdir = join(dir, name);
    await buildAscii({
      ...SERVER_BUNDLE_OPTIONS,
      ...options,
      sourcemap: "linked",
      entryPoints: [entry],
      outfile: join(outdir, "app.cjs"),
    });
    await writeServerLauncher(outdir);
    const { stdout, stderr } = await run(process.execPath, [join(outdir, "main.js")], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ROADNERD_CODE_CACHE: "off" },
      timeout: 60_000,
    });
    return { bundle: join(outdir, "app.cjs"), stdout, stderr };
  }

  const unminify = (input: string, args: string[] = []) =>
    execFileSync(process.execPath, [join(REPO_ROOT, "scripts/unminify-stack.mjs"), ...args], {
      input,
      cwd: dir,
      encoding: "utf8",
      stdio: ["pipe", "pipe", "pipe"],
      timeout: 60_000,
    });

  it("names places in app.cjs that unminify-stack.mjs maps back to the source through app.cjs.map", async () => {
    const { bundle, stderr } = await buildAndRun("thrower", [
      "function explodeHereWithALongName(times: number): number {",
      '  if (times > 0) throw new Error("boom from the test");',
      "  return times;",
      "}",
      "try {",
      "  explodeHereWithALongName(1);",
      "} catch (err) {",
      '  process.stderr.write(String((err as Error).stack) + "\\n");',
      "}",
    ]);
    // Minified: the function's own name is gone from the bundle, so only the map can say where it threw.
    expect(readFileSync(bundle, "utf8")).not.toContain("explodeHereWithALongName");
    const frame = stderr.split("\n").find((l) => l.includes("app.cjs:")) ?? "";
    expect(frame).toMatch(/app\.cjs:1:\d+\)$/);
    const mapped = unminify(stderr);
    // Line 2, at the `throw` (column 18) or the Error made on it (column 24): what V8 names for a new Error.
    expect(mapped).toMatch(/\(thrower\.ts:2:(18|24) \[thrower\/app\.cjs:1:\d+\]\)/);
    expect(mapped).toContain("boom from the test");
    // From an image (no map beside the bundle there): the same server's map in a checkout of the same commit.
    const checkout = join(dir, "checkout");
    mkdirSync(join(checkout, "servers/x/dist"), { recursive: true });
    cpSync(`${bundle}.map`, join(checkout, "servers/x/dist/app.cjs.map"));
    const imageFrame = frame.replace(bundle, "/app/servers/x/dist/app.cjs");
    expect(unminify(imageFrame, ["--from", checkout])).toMatch(/thrower\.ts:2:(18|24) \[/);
    // A place past the bundle's end is left as it is; a FIFO named app.cjs.map is not opened for reading.
    const past = `    at x (${bundle}:99999:1)`;
    expect(unminify(past)).toBe(past);
    mkdirSync(join(dir, "fifo"));
    execFileSync("mkfifo", [join(dir, "fifo/app.cjs.map")]);
    const toFifo = `    at x (${join(dir, "fifo/app.cjs")}:1:5)`;
    expect(unminify(toFifo)).toBe(toFifo);
  }, 120_000);

  it("logs an error under its own name, though the bundle renamed its class", async () => {
    const src = (p: string) => JSON.stringify(join(REPO_ROOT, "packages/conventions/src", p));
    const { bundle, stdout } = await buildAndRun(
      "logs",
      [
        `import { DiagError } from ${src("errors/errors.ts")};`,
        `import { createLogger } from ${src("runtime/logger.ts")};`,
        'const log = createLogger({ name: "t", destination: 1 });',
        'log.error({ err: new DiagError("E_INTERNAL", "a bug") }, "failed");',
        "log.flush();",
      ],
      { nodePaths: [join(REPO_ROOT, "packages/conventions/node_modules")] },
    );
    expect(readFileSync(bundle, "utf8")).not.toMatch(/class DiagError\b/);
    const line = JSON.parse(stdout.trim().split("\n")[0] ?? "{}") as { err?: { type?: string; code?: string } };
    expect(line.err).toMatchObject({ type: "DiagError", code: "E_INTERNAL" });
  }, 120_000);
});
