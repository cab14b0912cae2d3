/**
 * Where screenshots go: one directory (WEBCHECK_ARTIFACTS_DIR), at most a count and a total size of our own
 * files in it, the oldest deleted first. Only files this module named (snapshot-*.png) are ever counted or
 * deleted, so pointing the directory somewhere shared cannot cost anyone a file. Writes are atomic (a
 * temporary name, then rename); saves run one at a time per directory so two evictions never race.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readdir, rename, stat, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DiagError } from "@roadnerd/conventions";

export const ARTIFACT_NAME = /^snapshot-[0-9TZ-]+-[0-9a-f]{8}\.png$/;

export interface ArtifactLimits {
  dir: string;
  maxFiles: number;
  maxBytes: number;
}

export interface SavedArtifact {
  path: string;
  bytes: number;
  /** Older files deleted to stay within the limits. */
  evicted: number;
}

const queues = new Map<string, Promise<unknown>>();

function artifactName(now = new Date()): string {
  const stamp = now.toISOString().replace(/[:.]/g, "-");
  return `snapshot-${stamp}-${randomBytes(4).toString("hex")}.png`;
}

export interface ArtifactFile {
  path: string;
  bytes: number;
  mtimeMs: number;
  name: string;
}

/** Our files in `dir`, oldest first; none when the directory does not exist yet. */
export async function listArtifacts(dir: string): Promise<ArtifactFile[]> {
  const all = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return [] as string[];
    throw err;
  });
  const names = all.filter((n) => ARTIFACT_NAME.test(n));
  const files = await Promise.all(
    names.map(async (name) => {
      const path = join(dir, name);
      const s = await stat(path).catch(() => undefined);
      return s?.isFile() ? { path, bytes: s.size, mtimeMs: s.mtimeMs, name } : undefined;
    }),
  );
  // Oldest first; the name (a timestamp) breaks ties within one mtime tick.
  return files.filter((f) => f !== undefined).sort((a, b) => a.mtimeMs - b.mtimeMs || a.name.localeCompare(b.name));
}

async function saveNow(limits: ArtifactLimits, data: Buffer): Promise<SavedArtifact> {
  const name = artifactName();
  const path = join(limits.dir, name);
  const tmp = join(limits.dir, `.${name}.tmp`);
  try {
    await mkdir(limits.dir, { recursive: true, mode: 0o700 });
    await writeFile(tmp, data, { mode: 0o600 });
  } catch (err) {
    throw new DiagError(
      "E_UNSUPPORTED",
      `cannot write the screenshot to ${limits.dir} (${(err as NodeJS.ErrnoException).code ?? "error"})`,
      {
        hint: "set WEBCHECK_ARTIFACTS_DIR to a writable directory",
      },
    );
  }
  await rename(tmp, path);
  const files = await listArtifacts(limits.dir);
  let count = files.length;
  let total = files.reduce((sum, f) => sum + f.bytes, 0);
  let evicted = 0;
  for (const f of files) {
    if (count <= limits.maxFiles && total <= limits.maxBytes) break;
    // The file just written is the answer: it stays even if it alone is over the size limit.
    if (f.path === path) continue;
    await unlink(f.path).catch(() => undefined);
    count -= 1;
    total -= f.bytes;
    evicted += 1;
  }
  return { path, bytes: data.length, evicted };
}

export function saveArtifact(limits: ArtifactLimits, data: Buffer): Promise<SavedArtifact> {
  const before = queues.get(limits.dir) ?? Promise.resolve();
  const next = before.catch(() => undefined).then(() => saveNow(limits, data));
  queues.set(limits.dir, next);
  void next
    .finally(() => {
      if (queues.get(limits.dir) === next) queues.delete(limits.dir);
    })
    .catch(() => undefined);
  return next;
}
