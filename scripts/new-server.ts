// pnpm new-server <name> [--summary "one line"]: write servers/<name> from the skeleton (scripts/lib/skeleton.ts)
// on the next free port, make the registry depend on it, link it into the workspace, and regenerate what derives
// from the registry (docs, README table, compose).
// The new server then builds, lints, passes the suite and answers on every surface; replace its example tool.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { SERVER_NAME } from "@roadnerd/conventions/internal";
import { plannedPort, REPO_ROOT, readRegistry } from "@roadnerd/registry";
import { writeRegistryFiles } from "./lib/registry-files.ts";
import { renderSkeleton, titleOf } from "./lib/skeleton.ts";

const args = process.argv.slice(2);
const name = args.find((a) => !a.startsWith("--"));
const summaryAt = args.indexOf("--summary");
const summary = summaryAt >= 0 ? args[summaryAt + 1] : undefined;

if (!name || !SERVER_NAME.test(name)) {
  console.error('usage: pnpm new-server <name> [--summary "what it answers, one line"]  (name: a-z, 0-9, -)');
  process.exit(2);
}
const dir = join(REPO_ROOT, "servers", name);
if (existsSync(dir)) {
  console.error(`servers/${name} exists already`);
  process.exit(1);
}
const port = plannedPort(readRegistry().map((s) => s.defaultPort));
const files = renderSkeleton({
  name,
  port,
  title: titleOf(name),
  summary: summary ?? `${titleOf(name)} diagnostics (say in one line what this server answers).`,
  version: "0.1.0",
});
for (const [path, content] of Object.entries(files)) {
  await mkdir(dirname(join(dir, path)), { recursive: true });
  await writeFile(join(dir, path), content, { mode: path.startsWith("bin/") ? 0o755 : 0o644 });
}
console.log(`wrote servers/${name} (port ${port}): ${Object.keys(files).join(", ")}`);
// The registry imports the new server through its package: depend on it before pnpm links it.
await writeRegistryFiles(readRegistry());

const pnpm = (...argv: string[]) => {
  const r = spawnSync("pnpm", argv, { cwd: REPO_ROOT, stdio: "inherit" });
  if (r.status !== 0) throw new Error(`pnpm ${argv.join(" ")} failed`);
};
// Link the new package into the workspace (every dependency is already in the store). Adding a package changes
// the lockfile on purpose, which pnpm refuses by default where CI=true: say so explicitly.
const offline = spawnSync("pnpm", ["install", "--offline", "--no-frozen-lockfile"], {
  cwd: REPO_ROOT,
  stdio: "inherit",
});
if (offline.status !== 0) pnpm("install", "--no-frozen-lockfile");
pnpm("generate");
pnpm("exec", "biome", "check", "--write", `servers/${name}`);
console.log(`\nnext: replace servers/${name}/src/tools/uptime.ts with real tools, then pnpm test`);
