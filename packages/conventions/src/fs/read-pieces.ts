/**
 * A kernel table (/proc/net/tcp and the like) read piece by piece, for a reader that can stop early. Such a file
 * is made as it is read: every read of /proc/net/tcp walks the kernel's connection hash on from where the last
 * one stopped, and the read that finds the end walks it again from the start, so a reader that has what it
 * needs should stop rather than read to the end (ADR 0060). The kernel hands out one page per read whatever is
 * asked, so the bound is in bytes, never in reads (1,024 reads were 4 MiB: stop 28's review).
 *
 * A reader of a kernel table whose rows are short (`rowsAtMost`) is spared the read that finds the end (and walks
 * the hash again): the kernel fills its page with whole rows until the next one does not fit or the table has
 * ended (seq_read_iter), so a read that asked for two pages or more and got less than a page minus the longest
 * row is the end (ADR 0061). Only for such tables: a file of longer rows (mountinfo) or a pipe would be cut.
 */
import { closeSync, openSync, readSync } from "node:fs";

export interface PieceOptions {
  /** The reading ends with "limit" once this many bytes were taken. */
  maxBytes: number;
  /** Bytes asked for by the first read; each next read asks for twice as many, up to 64 KiB. */
  firstBytes?: number;
  /** Checked before each read (async reads only). */
  signal?: AbortSignal | undefined;
  /** Called once the file is open: a reader that fails later still tells "read in part" from "no such file". */
  opened?: () => void;
  /**
   * The longest row of a kernel table made by seq_file (the /proc/net socket tables: `NET_TABLE_ROW`): a piece
   * shorter than a page by more than this, two pages asked for, is the end, and no read is made to find it.
   */
  rowsAtMost?: number;
}

/** Longer than any row of the /proc/net socket tables (tcp6 ≤ ~250 bytes; tcp padded to 150, udp to 128). */
export const NET_TABLE_ROW = 512;

/** How a reading ended: `take` had enough, the file's end ("" was handed over), or `maxBytes`. */
export type PiecesEnd = "taken" | "end" | "limit";

const MAX_PIECE = 64 * 1024;
/** The smallest page Linux has; a read of a table fills at most one (more only for a row longer than a page). */
const PAGE = 4096;

/** The sizes to ask for and the bound: shared by the async and the sync reading. */
function pacing(options: PieceOptions) {
  let size = Math.min(options.firstBytes ?? MAX_PIECE, MAX_PIECE);
  let total = 0;
  return {
    size: () => size,
    /**
     * Hands a read's `text` to `take`; then how the reading ends, or undefined. A short piece of a table of short
     * rows is the end, known without reading it: `take` is handed "" then, as at the end.
     */
    after(text: string, take: (text: string) => boolean): PiecesEnd | undefined {
      const enough = take(text);
      if (text === "") return "end";
      if (enough) return "taken";
      total += text.length;
      if (total >= options.maxBytes) return "limit";
      const row = options.rowsAtMost;
      const short = row !== undefined && size >= 2 * PAGE && text.length < PAGE - row;
      size = Math.min(2 * size, MAX_PIECE);
      if (!short) return undefined;
      take("");
      return "end";
    },
  };
}

/**
 * Reads `path` (latin1) and hands each piece's text to `take` until it returns true, the end (handed over as
 * "", once) or `maxBytes`. Throws what open or a read throws; `take` has had every piece read before that.
 */
export async function readPieces(
  path: string,
  take: (text: string) => boolean,
  options: PieceOptions,
): Promise<PiecesEnd> {
  // fs/promises at the first async read, not at start (~1.3 ms of it; the sync readers never need it).
  const handle = await process.getBuiltinModule("node:fs/promises").open(path, "r");
  options.opened?.();
  try {
    const pace = pacing(options);
    // Bounded: every read until the end gives at least a byte, and maxBytes of them end it.
    for (;;) {
      options.signal?.throwIfAborted();
      const buffer = Buffer.allocUnsafe(pace.size());
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      const text = buffer.toString("latin1", 0, bytesRead);
      const ended = pace.after(text, take);
      if (ended) return ended;
    }
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** The same on the calling thread: for a reader that must not make a thread-pool round trip per piece. */
export function readPiecesSync(path: string, take: (text: string) => boolean, options: PieceOptions): PiecesEnd {
  const fd = openSync(path, "r");
  options.opened?.();
  try {
    const pace = pacing(options);
    // Bounded as above.
    for (;;) {
      const buffer = Buffer.allocUnsafe(pace.size());
      const bytesRead = readSync(fd, buffer, 0, buffer.length, null);
      const text = buffer.toString("latin1", 0, bytesRead);
      const ended = pace.after(text, take);
      if (ended) return ended;
    }
  } finally {
    closeSync(fd);
  }
}
