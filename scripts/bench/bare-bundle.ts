/**
 * Build the bare Fastify + zod baseline (scripts/bench/bare-app.mjs) into a temp dir exactly as scripts/build.ts
 * builds a server: one esbuild ESM bundle with the same banner, and the same launcher that turns the compile
 * cache on before the bundle is parsed. Attach and /healthz are measured against it.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "@roadnerd/registry";
import { build } from "esbuild";
import { BUNDLE_OPTIONS } from "../lib/bundle-options.ts";

export interface BareBundle {
  /** The launcher: `node <main>` starts it. */
  main: string;
  remove(): void;
}

export async function buildBareBundle(): Promise<BareBundle> {
  const outdir = mkdtempSync(join(tmpdir(), "rn-bench-bare-"));
  await build({
    ...BUNDLE_OPTIONS,
    entryPoints: { app: join(REPO_ROOT, "scripts/bench/bare-app.mjs") },
    outdir,
    // Resolve fastify and zod from the kernel's package, where the servers get theirs.
    nodePaths: [join(REPO_ROOT, "packages/conventions/node_modules")],
    // .mjs: the temp dir has no package.json saying "type": "module".
    outExtension: { ".js": ".mjs" },
  });
  const main = join(outdir, "main.mjs");
  writeFileSync(
    main,
    'import module from "node:module";\ntry { module.enableCompileCache?.(); } catch {}\nawait import("./app.mjs");\n',
  );
  return { main, remove: () => rmSync(outdir, { recursive: true, force: true }) };
}
