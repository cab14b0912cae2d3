// pnpm build: bundle every registered server's src/main.ts with esbuild into servers/<name>/dist: one ESM
// file per server plus lazy chunks (the HTTP app, /mcp, undici), so a server starts from built JavaScript
// with no TypeScript work at start-up. The list of servers is the registry's.
import { chmod, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { REPO_ROOT, selectedServers } from "@roadnerd/registry";
import { build } from "esbuild";

const banner = [
  // CommonJS dependencies inside an ESM bundle still call require().
  'import { createRequire as __rnCreateRequire } from "node:module";',
  "const require = __rnCreateRequire(import.meta.url);",
].join("\n");

/**
 * A tiny launcher turns on Node's compile cache (Node >= 22.1) before the bundle is parsed, so later starts
 * skip compiling it; enabling it from inside the bundle would come too late for the bundle itself.
 */
const LAUNCHER = [
  "#!/usr/bin/env node",
  'import module from "node:module";',
  "try { module.enableCompileCache?.(); } catch {}",
  'await import("./app.js");',
  "",
].join("\n");

for (const server of selectedServers()) {
  const dir = join(REPO_ROOT, server.dir);
  const outdir = join(dir, "dist");
  await rm(outdir, { recursive: true, force: true });
  const started = performance.now();
  await build({
    entryPoints: { app: join(dir, "src/main.ts") },
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: "linked",
    minifySyntax: true,
    legalComments: "none",
    banner: { js: banner },
    logLevel: "warning",
  });
  await writeFile(join(outdir, "main.js"), LAUNCHER);
  await chmod(join(outdir, "main.js"), 0o755);
  console.log(`built ${server.packageName} -> ${server.entry} (${Math.round(performance.now() - started)} ms)`);
}
