/**
 * The repository root, with a trailing slash. The testkit runs from its source in this workspace and is never
 * bundled, so the root is a fixed distance above this file; it does not ask @roadnerd/registry (whose walk up
 * to pnpm-workspace.yaml serves bundles), which would make the packages a cycle.
 */
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
