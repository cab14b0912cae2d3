/**
 * The kernel's one native module, sock-diag.node (ADR 0064): compiled from packages/conventions/native/sock-diag.c
 * with the machine's C compiler against Node-API's headers (the node-api-headers package: the ABI is stable, so
 * one build serves every Node from 18 on), then copied beside each bundle by `pnpm build`. Without a compiler
 * nothing fails: the build says so once and the servers read /proc/net as before.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { REPO_ROOT } from "../../packages/registry/src/read-registry.ts";

const KERNEL = join(REPO_ROOT, "packages/conventions");
export const ADDON_SOURCE = join(KERNEL, "native/sock-diag.c");
/** Where the build keeps it, and where the kernel run from source (tests) finds it. */
export const ADDON_BUILT = join(KERNEL, "native/build/sock-diag.node");
export const ADDON_NAME = "sock-diag.node";

const newer = (a: string, b: string) => statSync(a).mtimeMs > statSync(b).mtimeMs;

/**
 * Compiles the addon when it is missing or older than its source; says why when it could not. `out` and `cc`
 * (default: ADDON_BUILT and $CC or cc) for tests.
 */
export function buildAddon(out = ADDON_BUILT, cc = process.env.CC || "cc"): string | undefined {
  if (process.platform !== "linux") return "not Linux: the socket tables come from ss or /proc";
  if (existsSync(out) && !newer(ADDON_SOURCE, out)) return undefined;
  let include: string;
  try {
    include = join(
      dirname(createRequire(join(KERNEL, "package.json")).resolve("node-api-headers/package.json")),
      "include",
    );
  } catch {
    return "node-api-headers is not installed (pnpm install)";
  }
  mkdirSync(dirname(out), { recursive: true });
  const temp = `${out}.${process.pid}`;
  // Hardened as Debian builds its packages; -D_GNU_SOURCE for SOCK_CLOEXEC.
  const args = [
    ...["-O2", "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-D_FORTIFY_SOURCE=2", "-fstack-protector-strong"],
    ...["-fPIC", "-shared", "-Wl,-z,relro,-z,now", "-I", include, "-o", temp, ADDON_SOURCE],
  ];
  const run = spawnSync(cc, args, { encoding: "utf8" });
  if (run.error || run.status !== 0) {
    rmSync(temp, { force: true });
    const why = run.error
      ? `${cc}: ${(run.error as NodeJS.ErrnoException).code ?? run.error.message}`
      : run.stderr.trim();
    return `not compiled (${why.split("\n")[0]}): the socket tables come from /proc/net`;
  }
  renameSync(temp, out);
  return undefined;
}

/** The addon beside a bundle in `outdir` (a stale one removed when there is none to copy). */
export function placeAddon(outdir: string): void {
  const target = join(outdir, ADDON_NAME);
  if (!existsSync(ADDON_BUILT)) {
    rmSync(target, { force: true });
    return;
  }
  if (existsSync(target) && !newer(ADDON_BUILT, target)) return;
  copyFileSync(ADDON_BUILT, `${target}.${process.pid}`);
  renameSync(`${target}.${process.pid}`, target);
}
