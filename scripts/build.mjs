#!/usr/bin/env node
// Bundle every server's entry with esbuild: one ESM file per server (plus lazy chunks for /mcp),
// so a server starts from built JavaScript with no TypeScript work at start-up.
import { chmod, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { build } from "esbuild";

const root = new URL("..", import.meta.url).pathname;
const serversDir = join(root, "servers");

const banner = [
  // CommonJS dependencies inside an ESM bundle still call require().
  'import { createRequire as __rnCreateRequire } from "node:module";',
  "const require = __rnCreateRequire(import.meta.url);",
].join("\n");

const servers = (await readdir(serversDir, { withFileTypes: true })).filter((d) => d.isDirectory());
for (const dir of servers) {
  const pkgDir = join(serversDir, dir.name);
  const pkg = JSON.parse(await readFile(join(pkgDir, "package.json"), "utf8"));
  if (!pkg.bin) continue;
  const outdir = join(pkgDir, "dist");
  await rm(outdir, { recursive: true, force: true });
  const started = performance.now();
  await build({
    entryPoints: { app: join(pkgDir, "src/main.ts") },
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
  // A tiny launcher turns on Node's compile cache (Node >= 22.1) before the bundle is parsed, so the
  // second start skips compiling it; enabling it from inside the bundle would come too late for the bundle.
  await writeFile(
    join(outdir, "main.js"),
    [
      "#!/usr/bin/env node",
      'import module from "node:module";',
      "try { module.enableCompileCache?.(); } catch {}",
      'await import("./app.js");',
      "",
    ].join("\n"),
  );
  await chmod(join(outdir, "main.js"), 0o755);
  console.log(
    `built ${pkg.name} -> ${join("servers", dir.name, "dist/main.js")} (${Math.round(performance.now() - started)} ms)`,
  );
}
