/**
 * A server's launcher, dist/main.js: the kernel's launch-bundle alone, pointed at app.cjs beside it (ADR 0062).
 * CommonJS like the bundle (dist/package.json says so): an ES module entry costs Node its ESM loader and, for
 * `node:fs`, a facade that reads every export, file streams included.
 */
import { chmod, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { BuildOptions } from "esbuild";
import { codeCacheFits } from "../../packages/conventions/src/process/launch-bundle.ts";
import { REPO_ROOT } from "../../packages/registry/src/read-registry.ts";
import { buildAscii } from "./ascii-only.ts";
import { SERVER_BUNDLE_OPTIONS } from "./bundle-options.ts";
import { trainCodeCache } from "./train-code-cache.ts";

const LAUNCH_BUNDLE = join(REPO_ROOT, "packages/conventions/src/process/launch-bundle.ts");

/**
 * Writes `outdir`/main.js (executable) and `outdir`/package.json; the bundle is `outdir`/app.cjs. Whether the
 * launcher changed.
 */
export async function writeServerLauncher(outdir: string): Promise<boolean> {
  const changed = await buildAscii({
    ...SERVER_BUNDLE_OPTIONS,
    banner: { js: "#!/usr/bin/env node" },
    stdin: {
      contents: `import { join } from "node:path";\nimport { launchBundle } from ${JSON.stringify(LAUNCH_BUNDLE)};\nlaunchBundle(join(__dirname, "app.cjs"));\n`,
      resolveDir: outdir,
      sourcefile: "main.js",
      loader: "ts",
    },
    outfile: join(outdir, "main.js"),
  });
  await chmod(join(outdir, "main.js"), 0o755);
  await writeFile(join(outdir, "package.json"), `${JSON.stringify({ type: "commonjs" })}\n`);
  return changed;
}

/**
 * A server's whole dist/ as `pnpm build` makes it (and the bench its bare app built as a server is): `entry`
 * bundled into app.cjs, its launcher, and the code cache of a start. Says why when there is no cache.
 */
export async function buildServerDist(
  entry: string,
  outdir: string,
  options: Pick<BuildOptions, "external" | "nodePaths" | "sourcemap"> = {},
): Promise<string | undefined> {
  const bundle = join(outdir, "app.cjs");
  await removeStrays(outdir);
  const changed = await buildAscii({ ...SERVER_BUNDLE_OPTIONS, ...options, entryPoints: [entry], outfile: bundle });
  const launcherChanged = await writeServerLauncher(outdir);
  // The same bundle as last time, with a cache made from it: a start would get nothing new from training again
  // (`pnpm start` builds first: ~0.5 s a server). A new bundle's old caches are for other bytes: gone.
  if (!changed && !launcherChanged && codeCacheFits(bundle)) return undefined;
  if (changed) await removeCaches(outdir);
  return trainCodeCache(join(outdir, "main.js"), bundle);
}

/** What a server's dist/ holds; anything else there is left from an older build and removed. */
const DIST_FILE = /^(?:app\.cjs(?:\.map|\.v\d+\.\d+\.\d+\.v8cache)?|main\.js|package\.json|sock-diag\.node)$/;

async function removeStrays(outdir: string): Promise<void> {
  const names = await readdir(outdir).catch(() => [] as string[]);
  await Promise.all(
    names.filter((n) => !DIST_FILE.test(n)).map((n) => rm(join(outdir, n), { recursive: true, force: true })),
  );
}

async function removeCaches(outdir: string): Promise<void> {
  const names = await readdir(outdir);
  await Promise.all(names.filter((n) => n.endsWith(".v8cache")).map((n) => rm(join(outdir, n), { force: true })));
}
