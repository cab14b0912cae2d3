/**
 * Lookups below an open directory, the way openat(2) and fstatat(2) do them, which Node lacks: a path through
 * /proc/self/fd/<fd>/ starts at the directory the descriptor holds, whatever has been renamed or swapped for a
 * symlink above it since it was opened. With O_NOFOLLOW on each component opened this way, a walk or a read
 * stays where it was checked to be, not where a path string leads at the moment it is used.
 */
import { constants } from "node:fs";

/** Open a directory, never through a symlink as its last component (Node's opens are close-on-exec already). */
export const DIR_NOFOLLOW = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** The path naming an open descriptor's file, or `name` inside the directory it holds. */
export function fdPath(fd: number, name?: string): string {
  return name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;
}
