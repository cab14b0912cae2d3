/**
 * Filesystem roots built for a test: real files, real symlinks (relative and absolute, as the tools write them)
 * and real sockets in a temp directory that DNS_CONFIG_ROOT points at. Removed by `remove()`.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** path inside the root → file text, or `{ link }` for a symlink whose target is written as given. */
export type RootSpec = Record<string, string | { link: string } | { dir: true }>;

export interface BuiltRoot {
  dir: string;
  env: { DNS_CONFIG_ROOT: string };
  remove(): Promise<void>;
}

export async function buildRoot(spec: RootSpec): Promise<BuiltRoot> {
  const dir = await mkdtemp(join(tmpdir(), "rn-dns-root-"));
  for (const [path, what] of Object.entries(spec)) {
    const host = join(dir, path);
    await mkdir(dirname(host), { recursive: true });
    if (typeof what === "string") await writeFile(host, what);
    else if ("link" in what) await symlink(what.link, host);
    else await mkdir(host, { recursive: true });
  }
  return { dir, env: { DNS_CONFIG_ROOT: dir }, remove: () => rm(dir, { recursive: true, force: true }) };
}
