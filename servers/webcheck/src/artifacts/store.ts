/**
 * Where screenshots go: one directory (WEBCHECK_ARTIFACTS_DIR), at most a count and a total size of our own
 * files in it, the oldest deleted first. Only files this module named (snapshot-*.png) are ever counted or
 * deleted, so pointing the directory somewhere shared cannot cost anyone a file. Writes are atomic (a
 * temporary name, then rename); saves run one at a time per directory so two evictions never race.
 *
 * The directory is trusted only once checked on its descriptor (the default lives in the world-writable temp
 * dir, where anyone may plant a symlink or a directory of their own first): opened without following a
 * symlink, a directory, owned by this process's user, no access for anyone else (0700, tightened if it is
 * ours). Every write, rename and delete goes through that descriptor (/proc/self/fd/<fd>/<name>), the
 * temporary file is created exclusively (a link planted at its name is refused, never written through), and
 * a failed write (a full disk) removes it, so the next snapshot has the room back.
 */
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { type FileHandle, mkdir, open, readdir, rename, stat, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DIR_NOFOLLOW, DiagError, fdPath } from "@roadnerd/conventions";

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

const HINT = "set WEBCHECK_ARTIFACTS_DIR to a writable directory";

function unsafe(dir: string, why: string): DiagError {
  return new DiagError("E_FORBIDDEN", `refusing to write screenshots to ${dir}: ${why}`, {
    hint: "remove it (someone else may have made it) or set WEBCHECK_ARTIFACTS_DIR to a directory of this user's",
  });
}

/** The artifacts directory, made if missing, opened and checked as safe to write into (see the header). */
export async function openArtifactDir(dir: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    handle = await open(dir, DIR_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    if (code === "ELOOP") throw unsafe(dir, "it is a symlink");
    if (code === "ENOTDIR") throw unsafe(dir, "it is not a directory");
    throw new DiagError("E_UNSUPPORTED", `cannot make or open ${dir} (${code})`, { hint: HINT });
  }
  try {
    const st = await handle.stat();
    if (!st.isDirectory()) throw unsafe(dir, "it is not a directory");
    if (st.uid !== process.geteuid?.()) throw unsafe(dir, `it belongs to uid ${st.uid}, not this server's user`);
    if ((st.mode & 0o077) !== 0) await handle.chmod(0o700);
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

async function saveNow(limits: ArtifactLimits, data: Buffer): Promise<SavedArtifact> {
  const dir = await openArtifactDir(limits.dir);
  try {
    return await saveIn(dir.fd, limits, data);
  } finally {
    await dir.close();
  }
}

async function saveIn(dirFd: number, limits: ArtifactLimits, data: Buffer): Promise<SavedArtifact> {
  const name = artifactName();
  const path = join(limits.dir, name);
  const tmp = fdPath(dirFd, `.${name}.tmp`);
  try {
    // wx: O_CREAT|O_EXCL, so nothing already at the name (a planted symlink) is ever written through.
    await writeFile(tmp, data, { mode: 0o600, flag: constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL });
  } catch (err) {
    // A full disk leaves a partial file: it goes, or it would keep the room every later snapshot needs.
    await unlink(tmp).catch(() => undefined);
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    throw new DiagError("E_UNSUPPORTED", `cannot write the screenshot to ${limits.dir} (${code})`, { hint: HINT });
  }
  await rename(tmp, fdPath(dirFd, name)).catch(async (err: unknown) => {
    await unlink(tmp).catch(() => undefined);
    throw err;
  });
  const files = await listArtifacts(fdPath(dirFd));
  let count = files.length;
  let total = files.reduce((sum, f) => sum + f.bytes, 0);
  let evicted = 0;
  for (const f of files) {
    if (count <= limits.maxFiles && total <= limits.maxBytes) break;
    // The file just written is the answer: it stays even if it alone is over the size limit.
    if (f.name === name) continue;
    await unlink(fdPath(dirFd, f.name)).catch(() => undefined);
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
