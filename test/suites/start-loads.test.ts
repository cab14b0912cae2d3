/**
 * What a server runs to start (ADR 0049, issue 17 target 2): code only some routes need runs at its first use,
 * not at start. A server is one minified bundle (ADR 0062, 0067); V8's coverage (NODE_V8_COVERAGE, written at
 * exit) says which of its functions ran, and the bundle's source map which file and line each one is. After its
 * first `/healthz`, no function of yaml (PROBE_CONFIG only) or prom-client (the first `/metrics` or `/probe`) may
 * have run.
 * Then a start that serves one `/metrics` must show prom-client's: the check can fail. Nor may zod have compiled a
 * parser from strings (ADR 0063).
 */
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { SourceMap, type SourceMapPayload } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { selectedServers } from "@roadnerd/registry";
import { scaledMs, spawnServer } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUNDLE_WRAPPER } from "../../packages/conventions/src/process/launch-bundle.ts";

/** Packages a server must not run before a route needs them. */
const LATER = ["yaml", "prom-client"];

/**
 * zod's compiler of an object schema's parser (`new Function`, never in the code cache), as its source defines
 * it: the kernel sets zod to parse without it (ADR 0063), and a server parses each tool's example at start.
 */
const ZOD_JIT = /\bgenerateFastpass = /;
/** The kernel's defineTool, as its source defines it: every server runs it at start. */
const DEFINE_TOOL = /\bfunction defineTool\b/;

interface Coverage {
  result: Array<{ url: string; functions: Array<{ ranges: Array<{ startOffset: number; count: number }> }> }>;
}

interface Bundle {
  map: SourceMap;
  /** Where each line of app.cjs starts. */
  lineStarts: number[];
  /** Each source file's lines, from the map's own copy of it. */
  lines: Map<string, string[]>;
}

const bundles = new Map<string, Bundle>();
function bundleAt(path: string): Bundle {
  let b = bundles.get(path);
  if (!b) {
    const payload = JSON.parse(readFileSync(`${path}.map`, "utf8")) as SourceMapPayload & {
      sourcesContent: string[];
    };
    const lineStarts = [0];
    const text = readFileSync(path, "latin1");
    for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lineStarts.push(i + 1);
    const lines = new Map(payload.sources.map((s, i) => [s, (payload.sourcesContent[i] ?? "").split("\n")]));
    b = { map: new SourceMap(payload), lineStarts, lines };
    bundles.set(path, b);
  }
  return b;
}

/** The source file and line of the function starting at `offset` of the script V8 ran (wrapper and bundle). */
function originOf(b: Bundle, offset: number): { file: string; line: string } | undefined {
  const at = offset - BUNDLE_WRAPPER.length;
  if (at < 0) return undefined;
  let lo = 0;
  let hi = b.lineStarts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((b.lineStarts[mid] ?? 0) <= at) lo = mid;
    else hi = mid - 1;
  }
  const o = b.map.findOrigin(lo + 1, at - (b.lineStarts[lo] ?? 0) + 1) as { fileName?: string; lineNumber?: number };
  if (!o.fileName || o.lineNumber === undefined) return undefined;
  return { file: o.fileName, line: b.lines.get(o.fileName)?.[o.lineNumber - 1] ?? "" };
}

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rn-start-loads-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The packages (node_modules names) whose functions ran in a server's bundle, and the source lines of them. */
function packagesRun(coverageDir: string): { packages: Set<string>; functions: string[] } {
  const names = new Set<string>();
  const functions: string[] = [];
  for (const file of readdirSync(coverageDir)) {
    const coverage = JSON.parse(readFileSync(join(coverageDir, file), "utf8")) as Coverage;
    for (const script of coverage.result) {
      const path = script.url.startsWith("file:") ? fileURLToPath(script.url) : script.url;
      if (!path.endsWith("/dist/app.cjs")) continue;
      const bundle = bundleAt(path);
      for (const fn of script.functions) {
        const range = fn.ranges[0];
        if (!range?.count) continue;
        const origin = originOf(bundle, range.startOffset);
        if (!origin) continue;
        functions.push(origin.line);
        const name = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*node_modules\/)/.exec(origin.file)?.[1];
        if (name) names.add(name);
      }
    }
  }
  return { packages: names, functions };
}

/** Starts `name`, asks `paths` in turn, stops it; the packages whose inits ran. */
async function run(name: string, paths: string[]): Promise<ReturnType<typeof packagesRun>> {
  const coverageDir = await mkdtemp(join(dir, `${name}-`));
  const server = await spawnServer(name, {
    env: { PORT: "0", NODE_V8_COVERAGE: coverageDir },
    timeoutMs: scaledMs(30_000),
  });
  try {
    for (const path of paths) expect((await fetch(`${server.url}${path}`)).status).toBe(200);
  } finally {
    await server.stop();
  }
  return packagesRun(coverageDir);
}

describe("a server runs at start only what every request needs", () => {
  it.each(selectedServers())("$name: no yaml or prom-client before a route needs them", async ({ name }) => {
    const atStart = await run(name, ["/healthz"]);
    expect(atStart.packages.has("zod"), "the coverage saw the bundle's modules run").toBe(true);
    expect(LATER.filter((p) => atStart.packages.has(p))).toEqual([]);
    expect(
      atStart.functions.some((l) => DEFINE_TOOL.test(l)),
      "the map names the functions that ran",
    ).toBe(true);
    expect(
      atStart.functions.some((l) => ZOD_JIT.test(l)),
      "zod compiled a parser from strings at start",
    ).toBe(false);
    expect((await run(name, ["/healthz", "/metrics"])).packages.has("prom-client")).toBe(true);
  });
});
