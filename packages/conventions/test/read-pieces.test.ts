/**
 * fs/read-pieces.ts on real files: pieces grow from firstBytes, the reading ends where `take` has enough, at the
 * end ("" handed over once) or at maxBytes; the open is told apart from a failure after it. A short piece is the
 * end, without the read that would find it (a FIFO whose writer stays open shows that read is not made), and a
 * live /proc/net/tcp of several pages read so has every row.
 */
import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { type AddressInfo, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NET_TABLE_ROW, readPieces, readPiecesSync } from "../src/fs/read-pieces.ts";

const dir = mkdtempSync(join(tmpdir(), "rn-pieces-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, "table");
writeFileSync(file, "x".repeat(200_000));

describe.each([
  ["readPieces", readPieces],
  ["readPiecesSync", readPiecesSync],
] as const)("%s", (_, read) => {
  it("hands over pieces of 256, 512 … 64 KiB bytes, then '' at the end", async () => {
    const sizes: number[] = [];
    const take = (t: string) => {
      sizes.push(t.length);
      return false;
    };
    const ended = await read(file, take, { maxBytes: 1e9, firstBytes: 256 });
    expect(ended).toBe("end");
    expect(sizes.slice(0, 4)).toEqual([256, 512, 1024, 2048]);
    expect(sizes.at(-1)).toBe(0);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(200_000);
  });

  it("stops where take has enough, and at maxBytes", async () => {
    let seen = 0;
    const count = (enough: number) => (t: string) => {
      seen += t.length;
      return seen >= enough;
    };
    expect(await read(file, count(1_000), { maxBytes: 1e9, firstBytes: 256 })).toBe("taken");
    expect(seen).toBe(256 + 512 + 1024);
    seen = 0;
    expect(await read(file, count(Number.POSITIVE_INFINITY), { maxBytes: 100_000 })).toBe("limit");
    expect(seen).toBeGreaterThanOrEqual(100_000);
    expect(seen).toBeLessThan(200_000);
  });

  it("a missing file throws before `opened`", async () => {
    let opened = false;
    const reading = async () =>
      read(join(dir, "missing"), () => true, {
        maxBytes: 1,
        opened: () => {
          opened = true;
        },
      });
    await expect(reading()).rejects.toMatchObject({ code: "ENOENT" });
    expect(opened).toBe(false);
  });
});

/**
 * A FIFO holding `first`, with a writer that stays open (closed by the caller): a read past those bytes waits
 * for the writer.
 */
function heldFifo(name: string, first: string): { fifo: string; writer: number } {
  const fifo = join(dir, name);
  execFileSync("mkfifo", [fifo]);
  const writer = openSync(fifo, "r+");
  writeSync(writer, first);
  return { fifo, writer };
}

describe("a short piece is the end", () => {
  it("ends at a piece shorter than a page when two were asked for: the next read is not made", async () => {
    const { fifo, writer } = heldFifo("fifo", "y".repeat(100));
    try {
      const pieces: string[] = [];
      const take = (t: string) => {
        pieces.push(t);
        return false;
      };
      const ended = await readPieces(fifo, take, { maxBytes: 1e9, rowsAtMost: NET_TABLE_ROW });
      expect(ended).toBe("end");
      expect(pieces).toEqual(["y".repeat(100), ""]);
    } finally {
      closeSync(writer);
    }
  });

  it("only for a table of short rows: without rowsAtMost a short piece is read past", async () => {
    // A table of longer rows (mountinfo's can pass 800 bytes: four fill 3,200 of a page) would lose rows.
    const { fifo, writer } = heldFifo("fifo-2", "z".repeat(100));
    try {
      let got = 0;
      const take = (t: string) => {
        got += t.length;
        // Enough once a second piece came: the first, short one did not end the reading.
        return got > 100;
      };
      const reading = readPieces(fifo, take, { maxBytes: 1e9 });
      // The reading waits past the short piece for more: give it more.
      await new Promise((r) => setTimeout(r, 50));
      writeSync(writer, "z");
      expect(await reading).toBe("taken");
      expect(got).toBe(101);
    } finally {
      closeSync(writer);
    }
  });

  it("reads a live /proc/net/tcp of many pages whole: every listener this test holds is in it", async () => {
    const servers: Server[] = [];
    try {
      for (let i = 0; i < 120; i++) {
        const srv = createServer();
        await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
        servers.push(srv);
      }
      let text = "";
      const ended = await readPieces(
        "/proc/net/tcp",
        (t) => {
          text += t;
          return false;
        },
        { maxBytes: 1e9, rowsAtMost: NET_TABLE_ROW },
      );
      expect(ended).toBe("end");
      // 120 rows of 150 bytes: more than four pages, so the reading did go piece by piece.
      expect(text.length).toBeGreaterThan(4 * 4096);
      const ports = new Set(
        text
          .split("\n")
          .filter((l) => / 0A /.test(l))
          .map((l) => Number.parseInt(l.trim().split(/\s+/)[1]?.split(":")[1] ?? "", 16)),
      );
      for (const srv of servers) expect(ports.has((srv.address() as AddressInfo).port)).toBe(true);
    } finally {
      for (const srv of servers) srv.close();
    }
  });
});
