/**
 * The repository root, with a trailing slash: the nearest folder above this module that holds
 * pnpm-workspace.yaml. Walked up rather than a fixed distance, because scripts bundle the testkit elsewhere
 * (conformance, bench: .tools/run/). Not asked of @roadnerd/registry, which would make the packages a cycle.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const ancestors = here.split("/").map((_, i, parts) => parts.slice(0, parts.length - i).join("/") || "/");
const root = ancestors.find((dir) => existsSync(join(dir, "pnpm-workspace.yaml")));
if (!root) throw new Error(`no pnpm-workspace.yaml above ${here}`);

export const REPO_ROOT = `${root}/`;
