/**
 * What a small file or directory held when it was last read, given back while the walk's lstat of it says it is
 * the same one, unchanged: its device, inode, size, ctime and mtime. Every call still looks at every path (the
 * walk's lstat is the check); only the open, read and close of a file, or the listing of a directory, are saved
 * (issue 17: of dns_config_get's 15 system calls a call, 9 were those, on files that change a few times a day).
 *
 * A timestamp has a granularity (a clock tick, or a second or two on some filesystems): a change made within the
 * same tick as the read could leave every field as it was. So an entry is kept only when nothing changed the
 * file for SETTLED_MS before it was read; any later change then stamps a later ctime. Pseudo filesystems, whose
 * files do not keep their times as their contents change (/proc, /sys), are never kept. A write through a shared
 * mapping stamps the times only at its first write to a clean page (stop 34's review kept an mmap-written
 * resolv.conf stale for 40 s): an entry is given back for MAX_AGE_MS at most after it was read.
 */
import type { Stats } from "node:fs";

/** A file or directory changed within this long before it was read is not kept (coarse timestamps). */
export const SETTLED_MS = 2_000;
/** How long an entry is given back at most after its read, whatever the file's times say. */
export const MAX_AGE_MS = 1_000;
/** Entries kept at most (a call reads a dozen paths); the oldest goes first. */
export const MAX_ENTRIES = 128;
/** Files bigger than this, or directories with more names, are read every time. */
export const MAX_KEPT_BYTES = 16 * 1024;
export const MAX_KEPT_NAMES = 256;

interface Entry<T> {
  dev: number;
  ino: number;
  size: number;
  ctimeMs: number;
  mtimeMs: number;
  value: T;
  /** performance.now() of the read. */
  readAt: number;
}

/** Paths inside the root whose times say nothing about their contents. */
export function keepable(pathInRoot: string): boolean {
  return !/^\/(proc|sys)(\/|$)/.test(pathInRoot);
}

export interface SettledCache<T> {
  /** The value read from this very file (`st`: the walk's lstat of it now), or undefined. */
  get(key: string, st: Stats): T | undefined;
  /** Keep what was read from the file `st` described, if nothing had changed it for SETTLED_MS. */
  set(key: string, st: Stats, value: T, lookedAt?: number): void;
  clear(): void;
  /** Values given back so far (the tests' proof that a read was saved). */
  hits(): number;
}

export function settledCache<T>(): SettledCache<T> {
  const entries = new Map<string, Entry<T>>();
  let hits = 0;
  return {
    get(key, st) {
      const e = entries.get(key);
      if (!e) return undefined;
      const same =
        e.ino === st.ino &&
        e.dev === st.dev &&
        e.size === st.size &&
        e.ctimeMs === st.ctimeMs &&
        e.mtimeMs === st.mtimeMs &&
        performance.now() - e.readAt < MAX_AGE_MS;
      if (same) {
        hits += 1;
        return e.value;
      }
      entries.delete(key);
      return undefined;
    },
    set(key, st, value, lookedAt = Date.now()) {
      if (Math.max(st.ctimeMs, st.mtimeMs) > lookedAt - SETTLED_MS) return;
      entries.delete(key);
      const { dev, ino, size, ctimeMs, mtimeMs } = st;
      entries.set(key, { dev, ino, size, ctimeMs, mtimeMs, value, readAt: performance.now() });
      if (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
    },
    clear() {
      entries.clear();
    },
    hits: () => hits,
  };
}
