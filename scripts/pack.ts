// pnpm pack:npm: a publishable npm package of the CLI and of each server, from the built bundles (pnpm build
// first), as tarballs in .tools/pack/. Each is one esbuild bundle with its launcher as `bin`: no workspace
// links, no dependencies to fetch (a server's `roadnerd.runtime` packages travel inside the tarball as
// bundleDependencies), no source maps, no TypeScript. `npm publish .tools/pack/<dir>` publishes one.
//   roadnerd-mcp          bin roadnerd: the CLI and the gateway, with every server it starts (the registry's
//                         layout: pnpm-workspace.yaml marks the root, servers/<name>/{package.json,dist})
//   @roadnerd/<server>    bin roadnerd-<server>: one server (--stdio for MCP over stdin/stdout)
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { REPO_ROOT, type RegisteredServer, readRegistry } from "../packages/registry/src/read-registry.ts";

export const PACK_DIR = join(REPO_ROOT, ".tools/pack");
const ORCHESTRATOR_ENTRY = "packages/orchestrator/dist/main.js";
const root = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as {
  engines: Record<string, string>;
};
const catalog = (
  parse(readFileSync(join(REPO_ROOT, "pnpm-workspace.yaml"), "utf8")) as { catalog: Record<string, string> }
).catalog;

/** The bundle's own files: JavaScript only (the maps stay home). */
function copyDist(from: string, to: string): void {
  cpSync(from, to, { recursive: true, filter: (src) => !src.endsWith(".map") });
}

/** A runtime package (playwright-core) copied with links resolved into <dir>/node_modules, for bundleDependencies. */
function copyRuntime(server: RegisteredServer, dir: string): Record<string, string> {
  const deps: Record<string, string> = {};
  for (const pkg of server.runtime) {
    cpSync(join(REPO_ROOT, server.dir, "node_modules", pkg), join(dir, "node_modules", pkg), {
      recursive: true,
      dereference: true,
    });
    const version = catalog[pkg];
    if (!version) throw new Error(`${pkg}: not in the workspace catalog`);
    deps[pkg] = version;
  }
  return deps;
}

function manifest(fields: Record<string, unknown>, deps: Record<string, string>): string {
  const runtime = Object.keys(deps).length ? { dependencies: deps, bundleDependencies: Object.keys(deps) } : {};
  return `${JSON.stringify({ version: "0.1.0", type: "module", license: "MIT", engines: root.engines, ...fields, ...runtime }, null, 2)}\n`;
}

/** pnpm's own settings, which it passes to scripts as npm_config_*: npm warns about each one it does not know. */
const npmEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_config_/i.test(k)));

function npmPack(dir: string): string {
  const out = execFileSync("npm", ["pack", "--pack-destination", PACK_DIR, "--json", "--loglevel=warn"], {
    cwd: dir,
    encoding: "utf8",
    env: npmEnv,
  });
  const [info] = JSON.parse(out) as Array<{ filename: string }>;
  if (!info) throw new Error(`npm pack in ${dir} said nothing`);
  return join(PACK_DIR, info.filename.replace(/^@/, "").replace(/\//, "-"));
}

function packServer(s: RegisteredServer): string {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, s.dir, "package.json"), "utf8")) as {
    name: string;
    version: string;
    description: string;
    bin: Record<string, string>;
  };
  const dir = join(PACK_DIR, s.name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  copyDist(join(REPO_ROOT, s.dir, "dist"), join(dir, "dist"));
  cpSync(join(REPO_ROOT, s.dir, "bin"), join(dir, "bin"), { recursive: true });
  cpSync(join(REPO_ROOT, s.dir, "README.md"), join(dir, "README.md"));
  const deps = copyRuntime(s, dir);
  writeFileSync(
    join(dir, "package.json"),
    manifest(
      {
        name: pkg.name,
        version: pkg.version,
        description: pkg.description,
        bin: pkg.bin,
        files: ["bin", "dist"],
      },
      deps,
    ),
  );
  return npmPack(dir);
}

/** The CLI: its bundle, and every server's in the registry's layout, which is where it finds and starts them. */
function packCli(servers: readonly RegisteredServer[]): string {
  const dir = join(PACK_DIR, "roadnerd-mcp");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "packages/orchestrator"), { recursive: true });
  copyDist(join(REPO_ROOT, "packages/orchestrator/dist"), join(dir, "packages/orchestrator/dist"));
  cpSync(join(REPO_ROOT, "packages/orchestrator/bin"), join(dir, "packages/orchestrator/bin"), { recursive: true });
  // The registry finds its root by this file: an empty workspace, only a marker here.
  writeFileSync(join(dir, "pnpm-workspace.yaml"), "# the root the roadnerd CLI finds its servers under\n");
  let deps: Record<string, string> = {};
  for (const s of servers) {
    copyDist(join(REPO_ROOT, s.dir, "dist"), join(dir, s.dir, "dist"));
    cpSync(join(REPO_ROOT, s.dir, "package.json"), join(dir, s.dir, "package.json"));
    deps = { ...deps, ...copyRuntime(s, dir) };
  }
  cpSync(join(REPO_ROOT, "README.md"), join(dir, "README.md"));
  writeFileSync(
    join(dir, "package.json"),
    manifest(
      {
        name: "roadnerd-mcp",
        description: "roadnerd: read-only laptop diagnostics for AI assistants, every server and one MCP gateway.",
        bin: { roadnerd: "packages/orchestrator/bin/roadnerd.mjs" },
        files: ["pnpm-workspace.yaml", "packages/orchestrator/bin", "packages/orchestrator/dist", "servers"],
      },
      deps,
    ),
  );
  return npmPack(dir);
}

/** A mistake of the command line or an unbuilt checkout: one line that says the fix, exit 1 (no stack). */
function refuse(message: string): never {
  console.error(`pack:npm: ${message}`);
  process.exit(1);
}

const only = process.argv.slice(2);
const servers = readRegistry();
for (const name of only) {
  if (name !== "roadnerd-mcp" && !servers.some((s) => s.name === name))
    refuse(`unknown package ${name} (known: roadnerd-mcp, ${servers.map((s) => s.name).join(", ")})`);
}
// The CLI's tarball carries every server, so each bundle is needed whatever is packed.
const bundles = [
  ...servers.map((s) => ({ name: s.name, entry: s.entry })),
  { name: "orchestrator", entry: ORCHESTRATOR_ENTRY },
];
const unbuilt = bundles.filter((b) => !existsSync(join(REPO_ROOT, b.entry))).map((b) => b.name);
if (unbuilt.length > 0) refuse(`not built yet (no dist/main.js: ${unbuilt.join(", ")}): run \`pnpm build\` first`);
mkdirSync(PACK_DIR, { recursive: true });
for (const s of servers) {
  if (only.length === 0 || only.includes(s.name)) console.log(packServer(s));
}
if (only.length === 0 || only.includes("roadnerd-mcp")) console.log(packCli(servers));
