/**
 * What a server loads to start (ADR 0049, issue 17 target 2): code only some routes need is imported by its
 * first use, not at start. Each registered server's built bundle is started with a module hook that records
 * every file Node loads; after its first `/healthz`, no file of its bundle holding yaml (PROBE_CONFIG only) or
 * prom-client (the first `/metrics` or `/probe`) may have been loaded. Then one `/metrics` must load
 * prom-client: the hook sees what is loaded, so the first check can fail.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { REPO_ROOT, selectedServers } from "@roadnerd/registry";
import { type SpawnedServer, scaledMs, spawnServer } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** Packages a server must not load before a route needs them. */
const LATER = ["yaml", "prom-client"];

// registerHooks (Node >= 22.15, 23.5): synchronous, in the loading thread, so the list is complete at each read.
const HOOK = `import { appendFileSync } from "node:fs";
import { registerHooks } from "node:module";
const out = process.env.RN_LOADED_FILE;
registerHooks({ load(url, context, next) { appendFileSync(out, url + "\\n"); return next(url, context); } });
`;

let dir: string;
let hook: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rn-start-loads-"));
  hook = join(dir, "hook.mjs");
  await writeFile(hook, HOOK);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The packages (node_modules names) whose sources are in the bundle files this list of URLs loaded. */
function packagesLoaded(listFile: string): Set<string> {
  const names = new Set<string>();
  for (const url of readFileSync(listFile, "utf8").split("\n")) {
    if (!url.startsWith("file:") || !url.endsWith(".js")) continue;
    let sources: string[];
    try {
      sources = JSON.parse(readFileSync(`${fileURLToPath(url)}.map`, "utf8")).sources;
    } catch {
      continue; // not one of our bundle's files (no source map)
    }
    for (const source of sources) {
      const name = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*node_modules\/)/.exec(source)?.[1];
      if (name) names.add(name);
    }
  }
  return names;
}

describe("a server loads at start only what every request needs", () => {
  it.each(selectedServers())(
    "$name: no yaml or prom-client before a route needs them",
    async ({ name, dir: serverDir }) => {
      const listFile = join(dir, `${name}.loaded`);
      await writeFile(listFile, "");
      let server: SpawnedServer | undefined;
      try {
        server = await spawnServer(name, {
          env: { PORT: "0", NODE_OPTIONS: `--import=${hook}`, RN_LOADED_FILE: listFile },
          timeoutMs: scaledMs(30_000),
        });
        expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
        const atStart = packagesLoaded(listFile);
        expect(atStart.has("zod"), `the hook saw ${join(REPO_ROOT, serverDir)}'s bundle load`).toBe(true);
        expect(LATER.filter((p) => atStart.has(p))).toEqual([]);
        expect((await fetch(`${server.url}/metrics`)).status).toBe(200);
        expect(packagesLoaded(listFile).has("prom-client")).toBe(true);
      } finally {
        await server?.stop();
      }
    },
  );
});
