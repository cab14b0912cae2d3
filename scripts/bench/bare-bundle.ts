/**
 * Build the bare Fastify + zod baseline (scripts/bench/bare-app.mjs) into a temp dir the standard way: one
 * esbuild ESM bundle (the options the orchestrator is built with) and a launcher that turns Node's compile
 * cache on before the bundle is parsed. Attach and /healthz are measured against it. `buildBareAsServer` builds
 * it as `pnpm build` builds a server (ADR 0062): how much of a server's attach is the build, not the kernel.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "@roadnerd/registry";
import { build } from "esbuild";
import { BUNDLE_OPTIONS } from "../lib/bundle-options.ts";
import { buildServerDist } from "../lib/server-launcher.ts";

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

/** The bare app built as a server is (one CommonJS bundle, its launcher, the code cache of a start). */
export async function buildBareAsServer(): Promise<BareBundle> {
  const outdir = mkdtempSync(join(tmpdir(), "rn-bench-bare-cjs-"));
  const problem = await buildServerDist(join(REPO_ROOT, "scripts/bench/bare-app.mjs"), outdir, {
    nodePaths: [join(REPO_ROOT, "packages/conventions/node_modules")],
  });
  if (problem) throw new Error(`bare bundle as a server: ${problem}`);
  return { main: join(outdir, "main.js"), remove: () => rmSync(outdir, { recursive: true, force: true }) };
}
