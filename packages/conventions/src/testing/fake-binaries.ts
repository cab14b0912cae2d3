/**
 * Fake binaries for parser and failure-path tests: tiny shell scripts on a test-only EXEC_PATH that print
 * recorded output, fail, hang or are missing. Alongside the live path, never instead of it.
 */
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface FakeBinaries {
  /** The directory to use as EXEC_PATH: only these binaries exist there. */
  dir: string;
  cleanup(): Promise<void>;
}

/** `scripts`: binary name → the shell body it runs (`#!/bin/sh` is added). An empty map: nothing is installed. */
export async function fakeBinaries(scripts: Readonly<Record<string, string>>): Promise<FakeBinaries> {
  const dir = await mkdtemp(join(tmpdir(), "rn-fakebin-"));
  for (const [name, body] of Object.entries(scripts)) {
    if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new Error(`fake binary name: ${name}`);
    const path = join(dir, name);
    await writeFile(path, `#!/bin/sh\n${body}\n`);
    await chmod(path, 0o755);
  }
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}
