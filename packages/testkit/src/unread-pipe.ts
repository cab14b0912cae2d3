/**
 * A pipe nobody reads, already full: what a client's stdout looks like once it has stopped reading its answers
 * (issue 18, F7). Give `fd` to a child as its stdout; every write the child makes then waits. A named pipe held
 * open for reading and writing by this process, filled until the kernel refuses more.
 */
import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface UnreadPipe {
  fd: number;
  /** Bytes that filled it. */
  filled: number;
  close(): void;
}

export function unreadFullPipe(): UnreadPipe {
  const dir = mkdtempSync(join(tmpdir(), "roadnerd-unread-"));
  const path = join(dir, "pipe");
  execFileSync("mkfifo", [path]);
  // Read-write: the open does not wait for a reader, and the pipe stays open with no one reading it.
  const fd = openSync(path, constants.O_RDWR | constants.O_NONBLOCK);
  const chunk = Buffer.alloc(4096, 0x20);
  let filled = 0;
  // Bounded: a pipe holds at most /proc/sys/fs/pipe-max-size (1 MiB by default).
  for (let i = 0; i < 1024; i++) {
    try {
      filled += writeSync(fd, chunk);
    } catch {
      break; // EAGAIN: full
    }
  }
  return {
    fd,
    filled,
    close() {
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
