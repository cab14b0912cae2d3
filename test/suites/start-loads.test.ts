/**
 * What a server runs to start (ADR 0049, issue 17 target 2): code only some routes need runs at its first use,
 * not at start. A server is one bundle (ADR 0062) in which esbuild wraps each package module in an init named
 * after its file; V8's coverage (NODE_V8_COVERAGE, written at exit) says which inits ran. After its first
 * `/healthz`, no init of yaml (PROBE_CONFIG only) or prom-client (the first `/metrics` or `/probe`) may have run.
 * Then a start that serves one `/metrics` must show prom-client's: the check can fail. Nor may zod have compiled a
 * parser from strings (ADR 0063).
 */
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { selectedServers } from "@roadnerd/registry";
import { scaledMs, spawnServer } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** Packages a server must not run before a route needs them. */
const LATER = ["yaml", "prom-client"];

/**
 * zod's compiler of an object schema's parser (`new Function`, never in the code cache): the kernel sets zod to
 * parse without it (ADR 0063), and a server parses each tool's example at start.
 */
const ZOD_JIT = "generateFastpass";

interface Coverage {
  result: Array<{ url: string; functions: Array<{ functionName: string; ranges: Array<{ count: number }> }> }>;
}

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rn-start-loads-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The packages (node_modules names) whose module inits ran in a server's bundle, and the functions that ran. */
function packagesRun(coverageDir: string): { packages: Set<string>; functions: Set<string> } {
  const names = new Set<string>();
  const functions = new Set<string>();
  for (const file of readdirSync(coverageDir)) {
    const coverage = JSON.parse(readFileSync(join(coverageDir, file), "utf8")) as Coverage;
    for (const script of coverage.result) {
      if (!script.url.endsWith("/dist/app.cjs")) continue;
      for (const fn of script.functions) {
        if (!fn.ranges[0]?.count) continue;
        functions.add(fn.functionName);
        const name = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*node_modules\/)/.exec(fn.functionName)?.[1];
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
    expect(atStart.functions.has("defineTool"), "the coverage names the functions that ran").toBe(true);
    expect(atStart.functions.has(ZOD_JIT), "zod compiled a parser from strings at start").toBe(false);
    expect((await run(name, ["/healthz", "/metrics"])).packages.has("prom-client")).toBe(true);
  });
});
