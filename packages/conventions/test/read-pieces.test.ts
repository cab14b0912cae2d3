/**
 * fs/read-pieces.ts on real files: pieces grow from firstBytes, the reading ends where `take` has enough, at the
 * end ("" handed over once) or at maxBytes; the open is told apart from a failure after it.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readPieces, readPiecesSync } from "../src/fs/read-pieces.ts";

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
