/**
 * A server's launcher, dist/main.js: the kernel's launch-bundle alone, pointed at app.cjs beside it (ADR 0062).
 * CommonJS like the bundle (dist/package.json says so): an ES module entry costs Node its ESM loader and, for
 * `node:fs`, a facade that reads every export, file streams included.
 */
import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { REPO_ROOT } from "../../packages/registry/src/read-registry.ts";
import { buildAscii } from "./ascii-only.ts";
import { SERVER_BUNDLE_OPTIONS } from "./bundle-options.ts";

const LAUNCH_BUNDLE = join(REPO_ROOT, "packages/conventions/src/process/launch-bundle.ts");

/** Writes `outdir`/main.js (executable) and `outdir`/package.json; the bundle is `outdir`/app.cjs. */
export async function writeServerLauncher(outdir: string): Promise<void> {
  await buildAscii({
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
}
