import { build } from "esbuild";
import { SERVER_BUNDLE_OPTIONS } from "../lib/bundle-options.ts";
const name = process.argv[2] ?? "network";
const r = await build({ ...SERVER_BUNDLE_OPTIONS, entryPoints: [`servers/${name}/src/main.ts`], write: false, metafile: true, outfile: "/tmp/s/x.cjs" });
const by = new Map<string, number>();
for (const [path, inp] of Object.entries(Object.values(r.metafile.outputs)[0]?.inputs ?? {})) {
  const m = /node_modules\/\.pnpm\/([^/]+)\//.exec(path); const key = m ? m[1]!.replace(/@[\d.]+.*$/, "") : path.split("/").slice(0, 3).join("/");
  by.set(key, (by.get(key) ?? 0) + inp.bytesInOutput);
}
console.log([...by].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([k, v]) => `${(v / 1024).toFixed(0).padStart(6)} KiB ${k}`).join("\n"));
