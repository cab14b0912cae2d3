/** Read a small text file inside the root: symlinks resolved inside it, regular files only, size bounded. */
import { closeSync, constants, fstatSync, opendirSync, openSync, readSync, type Stats } from "node:fs";
import { DIR_NOFOLLOW, fdPath } from "@roadnerd/conventions";
import { type HeldPath, holdInRoot, inDir, type RootPath } from "./root-path.ts";
import { keepable, MAX_KEPT_BYTES, MAX_KEPT_NAMES, type SettledCache, settledCache } from "./settled-cache.ts";

/** Config files here are a few lines; anything bigger is read only this far. */
export const MAX_FILE_BYTES = 64 * 1024;

export interface BoundedText {
  at: RootPath;
  /** The text read, or undefined when the path leads nowhere or is not a regular file. */
  text?: string;
  /** The file was longer than the bound and only its start was read. */
  cut: boolean;
  /** Why there is no text: the path's problem, "not_a_file", or the open/read error code. */
  error?: string;
}

/**
 * The held path's own name, opened below its directory; with no name, the directory itself (its
 * /proc/self/fd link must be followed: it is the descriptor's own file, not a link anyone planted).
 */
const openHeld = (held: HeldPath, flags: number) =>
  held.name === undefined
    ? openSync(held.dir, flags & ~constants.O_NOFOLLOW)
    : openSync(inDir(held.dir, held.name), flags);

/** One buffer for every read: reads here are synchronous, and a 64 KiB zeroed buffer a file cost more than the read. */
const readBuffer = Buffer.allocUnsafe(MAX_FILE_BYTES + 1);

/** Files read whole and unchanged since (settled-cache.ts), by root, path inside it and bound. */
const keptFiles = settledCache<string>();
/** Directory listings (sorted, whole), by root and path inside it. */
const keptNames = settledCache<string[]>();
/** Reads and listings given back unchanged so far (tests). */
export const keptReads = (): number => keptFiles.hits() + keptNames.hits();

interface Kept<T> {
  /** What was kept for this very file or directory, unchanged since; undefined: read it. */
  value?: T;
  /** Keep what was just read (a no-op where the held path may not be kept). */
  keep(value: T): void;
}

/** The cache's entry for the held path when `kind` says it is one to keep (not /proc, /sys), and how to keep a read. */
function keptFor<T>(
  cache: SettledCache<T>,
  key: string,
  held: HeldPath,
  kind: (st: Stats) => boolean,
  lookedAt: number,
): Kept<T> {
  const st = held.stat;
  if (!st || !kind(st) || !keepable(held.at.path)) return { keep() {} };
  return { value: cache.get(key, st), keep: (value) => cache.set(key, st, value, lookedAt) };
}

export async function readInRoot(root: string, path: string, maxBytes = MAX_FILE_BYTES): Promise<BoundedText> {
  // Before the walk's lstat: a file kept must have been unchanged for SETTLED_MS before that look.
  const lookedAt = Date.now();
  const held = await holdInRoot(root, path);
  try {
    const kept = keptFor(keptFiles, `${root}\0${held.at.path}\0${maxBytes}`, held, (st) => st.isFile(), lookedAt);
    if (kept.value !== undefined) return { at: held.at, cut: false, text: kept.value };
    const read = readHeld(held, maxBytes);
    if (read.text !== undefined && !read.cut && read.text.length <= MAX_KEPT_BYTES) kept.keep(read.text);
    return read;
  } finally {
    await held.close();
  }
}

/** Synchronous like holdInRoot (root-path.ts): a small local file, read in microseconds. */
function readHeld(held: HeldPath, maxBytes: number): BoundedText {
  const at = held.at;
  if (at.problem) return { at, cut: false, error: at.problem };
  let fd: number;
  try {
    // Below the descriptor of its directory, so nothing renamed above it since counts; O_NOFOLLOW: the last
    // component was checked as not a link, a link swapped in since is refused.
    // O_NONBLOCK: a FIFO planted where a file should be must not hang the call.
    fd = openHeld(held, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    return { at, cut: false, error: (err as NodeJS.ErrnoException).code ?? "unreadable" };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { at, cut: false, error: "not_a_file" };
    const want = Math.min(maxBytes, MAX_FILE_BYTES) + 1;
    const bytesRead = readSync(fd, readBuffer, 0, want, 0);
    const cut = bytesRead >= want;
    return { at, cut, text: readBuffer.toString("utf8", 0, Math.min(bytesRead, want - 1)) };
  } catch (err) {
    return { at, cut: false, error: (err as NodeJS.ErrnoException).code ?? "unreadable" };
  } finally {
    closeSync(fd);
  }
}

/** O_PATH: a descriptor naming a file without opening it (Linux's 010000000 on x86-64 and arm64; Node does not export it). */
const O_PATH = 0o10000000;

/**
 * A socket inside the root, held by an O_PATH descriptor opened below its directory without following a link:
 * a connect through /proc/self/fd/<fd> reaches that very socket whatever is renamed or swapped meanwhile. (A
 * connect by path after the walk reached a root-only socket outside DNS_CONFIG_ROOT in 6 of 1,500 races: stop
 * 33's review.) undefined when the path leads nowhere or to something else; the caller closes the descriptor.
 */
export async function holdSocketInRoot(root: string, path: string): Promise<number | undefined> {
  const held = await holdInRoot(root, path);
  try {
    if (held.at.problem || held.name === undefined) return undefined;
    const fd = openHeld(held, O_PATH | constants.O_NOFOLLOW);
    if (fstatSync(fd).isSocket()) return fd;
    closeSync(fd);
    return undefined;
  } catch {
    return undefined;
  } finally {
    await held.close();
  }
}

/** Every name in the held directory, sorted. */
function listHeld(held: HeldPath): string[] {
  // Under `/` the path itself (a listing through /proc/self/fd costs 3× one by path); elsewhere the descriptor.
  if (held.plain) return namesIn(held.name === undefined ? held.dir : inDir(held.dir, held.name));
  const dir = openHeld(held, DIR_NOFOLLOW);
  try {
    return namesIn(fdPath(dir));
  } finally {
    closeSync(dir);
  }
}

/**
 * Names one listing reads at most, in the directory's own order: a directory planted with a million names must
 * not stall the call (stop 34's review). The directories read here hold a handful.
 */
export const LIST_AT_MOST = 4096;

function namesIn(path: string): string[] {
  const dir = opendirSync(path, { bufferSize: 128 });
  try {
    const names: string[] = [];
    for (let e = dir.readSync(); e !== null; e = names.length < LIST_AT_MOST ? dir.readSync() : null)
      names.push(e.name);
    return names.sort();
  } finally {
    dir.closeSync();
  }
}

/**
 * Names in a directory inside the root (symlinks resolved inside it), sorted, at most `max`; a listing kept
 * while the directory is unchanged (settled-cache.ts).
 */
export async function listInRoot(root: string, path: string, max = 64): Promise<string[]> {
  const lookedAt = Date.now();
  const held = await holdInRoot(root, path);
  try {
    if (held.at.problem) return [];
    const kept = keptFor(keptNames, `${root}\0${held.at.path}`, held, (st) => st.isDirectory(), lookedAt);
    if (kept.value) return kept.value.slice(0, max);
    const names = listHeld(held);
    if (names.length <= MAX_KEPT_NAMES) kept.keep(names);
    return names.slice(0, max);
  } catch {
    return [];
  } finally {
    await held.close();
  }
}
