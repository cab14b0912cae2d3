#!/usr/bin/env node
// Run a TypeScript script of this repo: bundle it with esbuild into .tools/run/ and import it.
// Usage: node scripts/run-ts.mjs scripts/generate.ts [args…]
import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

const root = new URL("..", import.meta.url).pathname;
const [entry, ...rest] = process.argv.slice(2);
if (!entry) {
  console.error("usage: node scripts/run-ts.mjs <file.ts> [args…]");
  process.exit(2);
}
const outdir = join(root, ".tools", "run");
mkdirSync(outdir, { recursive: true });
const outfile = join(outdir, `${basename(entry, ".ts")}.mjs`);
await build({
  entryPoints: [resolve(entry)],
  outfile,
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  logLevel: "warning",
  // esbuild finds its own binary relative to its package: it must stay a package, not bundled code.
  external: ["esbuild"],
  // CommonJS dependencies inside an ESM bundle still call require().
  banner: {
    js: 'import { createRequire as __rnCreateRequire } from "node:module"; const require = __rnCreateRequire(import.meta.url);',
  },
});
// The kernel's native module is looked for beside the code that runs (ADR 0064): beside this bundle too.
const addon = join(root, "packages/conventions/native/build/sock-diag.node");
if (existsSync(addon)) copyFileSync(addon, join(outdir, "sock-diag.node"));
process.argv = [process.argv[0], outfile, ...rest];
await import(pathToFileURL(outfile).href);
