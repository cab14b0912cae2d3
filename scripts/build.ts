// pnpm build: bundle every registered server's src/main.ts with esbuild into servers/<name>/dist, so a server
// starts from built JavaScript with no TypeScript work at start-up: one CommonJS file (app.cjs), its launcher
// (main.js) and the V8 code cache of a start (ADR 0062). The orchestrator: one ESM file plus lazy chunks. The
// list of servers is the registry's.
import { chmod, mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
// The registry's reader, not its index: the index re-exports loadServer, whose list of imports would bundle
// every server's source into this script, so one server mid-edit would break every build.
import { REPO_ROOT, readRegistry, selectedServers } from "../packages/registry/src/read-registry.ts";
import { buildAscii } from "./lib/ascii-only.ts";
import { BUNDLE_OPTIONS } from "./lib/bundle-options.ts";
import { buildAddon, placeAddon } from "./lib/native-addon.ts";
import { buildServerDist } from "./lib/server-launcher.ts";

/**
 * The orchestrator's launcher turns on Node's compile cache (Node >= 22.1) before the bundle is parsed, so later
 * starts skip compiling it; enabling it from inside the bundle would come too late for the bundle itself. The
 * cache lives beside the bundle, as trusted as it (Node's default, `<tmpdir>/node-compile-cache`, is a
 * directory another local user could make first, docs/security.md); where dist/ is not ours to write, none.
 */
const LAUNCHER = [
  "#!/usr/bin/env node",
  'import module from "node:module";',
  'import { fileURLToPath } from "node:url";',
  'try { module.enableCompileCache?.(fileURLToPath(new URL("./.compile-cache", import.meta.url))); } catch {}',
  'await import("./app.js");',
  "",
].join("\n");

/** `orchestrator` in ROADNERD_ONLY names the roadnerd CLI (packages/orchestrator), not a server. */
const ORCHESTRATOR = "orchestrator";
const only = (process.env.ROADNERD_ONLY ?? "")
  .split(",")
  .map((s) => s.trim())
  .filter(Boolean);
const serverNames = only.filter((n) => n !== ORCHESTRATOR);
const servers =
  only.length === 0
    ? selectedServers()
    : serverNames.length
      ? selectedServers({ ROADNERD_ONLY: serverNames.join(",") })
      : [];
// A server's `roadnerd.runtime` packages stay out of its bundle (and out of the orchestrator's, which bundles
// every server's definitions for its catalog): they are loaded from node_modules when first used.
const runtimeExternal = [...new Set(readRegistry().flatMap((s) => s.runtime))];
const targets: Array<{ label: string; dir: string; entry: string; external: string[]; server: boolean }> = servers.map(
  (s) => ({ label: s.packageName, dir: s.dir, entry: s.entry, external: [...s.runtime], server: true }),
);
if (only.length === 0 || only.includes(ORCHESTRATOR)) {
  targets.push({
    label: "@roadnerd/orchestrator",
    dir: "packages/orchestrator",
    entry: "packages/orchestrator/dist/main.js",
    external: runtimeExternal,
    server: false,
  });
}

// The kernel's native module first (ADR 0064): each dist/ gets a copy, and a server's training start loads it.
const addonProblem = buildAddon();
if (addonProblem) console.warn(`sock-diag.node: ${addonProblem}`);

/** One target's dist/; said in one line when done. */
async function buildTarget(target: (typeof targets)[number]): Promise<void> {
  const dir = join(REPO_ROOT, target.dir);
  const outdir = join(dir, "dist");
  // A server's dist/ is kept: buildServerDist rewrites what changed and keeps a code cache that still fits.
  if (!target.server) await rm(outdir, { recursive: true, force: true });
  const started = performance.now();
  let cacheProblem: string | undefined;
  if (target.server) {
    await mkdir(outdir, { recursive: true });
    placeAddon(outdir);
    cacheProblem = await buildServerDist(join(dir, "src/main.ts"), outdir, {
      sourcemap: "linked",
      external: target.external,
    });
  } else {
    await buildAscii({
      ...BUNDLE_OPTIONS,
      entryPoints: { app: join(dir, "src/main.ts") },
      outdir,
      sourcemap: "linked",
      external: target.external,
    });
    await writeFile(join(outdir, "main.js"), LAUNCHER);
    placeAddon(outdir);
    await chmod(join(outdir, "main.js"), 0o755);
  }
  console.log(`built ${target.label} -> ${target.entry} (${Math.round(performance.now() - started)} ms)`);
  // Without a cache the server still starts, compiling from source as before: said, not fatal.
  if (cacheProblem) console.warn(`  no code cache for ${target.label}: ${cacheProblem}`);
}

// Two at a time: esbuild is parallel inside already; a second build overlaps one's training start (a server's
// first answer) and its file writes with the other's bundling.
const queue = [...targets];
await Promise.all(
  [0, 1].map(async () => {
    for (let t = queue.shift(); t; t = queue.shift()) await buildTarget(t);
  }),
);
