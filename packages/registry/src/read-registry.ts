/**
 * The registry is the servers/ directory: every folder with a package.json is a server and must declare
 * itself fully (parseServerPackage). Nothing else lists servers by hand.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseServerPackage, type ServerIdentity } from "@roadnerd/conventions/internal";

/** The workspace root above this file: found by walking up, so it holds when a script bundles this module elsewhere. */
function findRoot(from: string): string {
  for (let dir = from; dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, "pnpm-workspace.yaml"))) return `${dir}/`;
  }
  throw new Error(`no pnpm-workspace.yaml above ${from}`);
}

export const REPO_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));

/** Where a server package exports its definition (`export const server = defineServer(…)`). */
const SERVER_EXPORT = "./src/server.ts";

function serverExport(pkg: unknown): unknown {
  if (typeof pkg !== "object" || pkg === null || !("exports" in pkg)) return undefined;
  const { exports } = pkg;
  return typeof exports === "object" && exports !== null && "./server" in exports ? exports["./server"] : undefined;
}

export interface RegisteredServer extends ServerIdentity {
  /** servers/<name>, relative to the repository root. */
  dir: string;
  /** The built entry, relative to the root: servers/<name>/dist/main.js. */
  entry: string;
}

export function readRegistry(root: string = REPO_ROOT): RegisteredServer[] {
  const serversDir = join(root, "servers");
  const found: RegisteredServer[] = [];
  for (const entry of readdirSync(serversDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const dir = `servers/${entry.name}`;
    const pkgPath = join(root, dir, "package.json");
    if (!existsSync(pkgPath)) continue;
    const pkg: unknown = JSON.parse(readFileSync(pkgPath, "utf8"));
    const identity = parseServerPackage(pkg, `${dir}/package.json`);
    if (identity.name !== entry.name) {
      throw new Error(`${dir}/package.json: the package is @roadnerd/${identity.name}; the folder must be ${dir}`);
    }
    if (serverExport(pkg) !== SERVER_EXPORT) {
      throw new Error(
        `${dir}/package.json: exports must be { "./server": "${SERVER_EXPORT}" } (the registry imports it)`,
      );
    }
    found.push({ ...identity, dir, entry: `${dir}/dist/main.js` });
  }
  return found.sort((a, b) => a.defaultPort - b.defaultPort || a.name.localeCompare(b.name));
}

/**
 * The servers a build, bench or per-server suite works on: all of them, or those named in `ROADNERD_ONLY`
 * (comma-separated), so work on one server does not rebuild or retest the others. A name that is not
 * registered is an error, not an empty run.
 */
export function selectedServers(env: NodeJS.ProcessEnv = process.env, root: string = REPO_ROOT): RegisteredServer[] {
  const all = readRegistry(root);
  const only = (env.ROADNERD_ONLY ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (only.length === 0) return all;
  const unknown = only.filter((name) => !all.some((s) => s.name === name));
  if (unknown.length > 0) throw new Error(`ROADNERD_ONLY names unknown servers: ${unknown.join(", ")}`);
  return all.filter((s) => only.includes(s.name));
}
