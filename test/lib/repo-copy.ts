/**
 * The repository as a checkout of the working tree would be, in a temp folder: its tracked and new files,
 * dependencies installed offline from the checkout's pnpm store, and (`built`) the bundles `pnpm build` made
 * here, so a test can run what a newcomer types without touching this checkout.
 */
import { execFile, execFileSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { REPO_ROOT } from "@roadnerd/registry";
import { scaledMs } from "@roadnerd/testkit";
import { expect } from "vitest";

export type Run = { code: number; out: string };

// The checkout's pnpm store: pnpm picks a store per filesystem, and the copy in the temp dir may be on another
// one (a tmpfs), where an offline install would find nothing.
// `pnpm store path` names the versioned directory inside it (…/store/v10).
export const STORE = execFileSync("pnpm", ["store", "path"], { cwd: REPO_ROOT, encoding: "utf8" })
  .trim()
  .replace(/\/v\d+$/, "");

/** One shell line in `cwd`, as a person's shell runs it; never rejects. */
export function sh(line: string, cwd: string, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      "sh",
      ["-c", line],
      {
        cwd,
        env: { ...process.env, npm_config_store_dir: STORE, ...env },
        timeout: scaledMs(300_000),
        maxBuffer: 16 << 20,
      },
      (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, out: `${stdout}\n${stderr}` });
      },
    );
  });
}

const copies: string[] = [];
/** Call from afterAll. */
export function removeCopies(): void {
  for (const dir of copies.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Every `dist/` under packages/ and servers/, as `pnpm build` left them in this checkout. */
function copyBundles(to: string): void {
  for (const top of ["packages", "servers"]) {
    for (const name of readdirSync(join(REPO_ROOT, top))) {
      const dist = join(REPO_ROOT, top, name, "dist");
      if (existsSync(dist)) cpSync(dist, join(to, top, name, "dist"), { recursive: true });
    }
  }
}

export async function copyOfRepo(options: { built?: boolean } = {}): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "rn-docs-"));
  copies.push(dir);
  let listing: string;
  try {
    listing = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
      cwd: REPO_ROOT,
      encoding: "utf8",
    });
  } catch (err) {
    // Installed only for the tests (`setup.sh --tests`): say so instead of a spawn ENOENT.
    if ((err as NodeJS.ErrnoException).code === "ENOENT") {
      throw new Error("git is not installed: run bash scripts/setup.sh --tests (README)");
    }
    throw err;
  }
  const files = listing.split("\0");
  for (const f of files) {
    if (!f || !existsSync(join(REPO_ROOT, f))) continue;
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    copyFileSync(join(REPO_ROOT, f), join(dir, f));
  }
  const install = await sh("pnpm install --offline --frozen-lockfile", dir);
  expect(install.code, install.out).toBe(0);
  if (options.built) copyBundles(dir);
  return dir;
}
