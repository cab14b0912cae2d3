/**
 * Regression (stop 28's review): the loopback uid lookup read a socket table by at most 1,024 reads, and the
 * kernel hands out one page per read, so past ~27,000 rows the caller's row was never reached: uid 65534 made
 * 130,000 TIME_WAIT rows and root was refused as an unknown user. The bound is now on bytes (1 GiB). Here the
 * lookup's own read on a table written to disk, in the kernel's format: 480,000 TIME_WAIT rows (72 MB, more
 * than 1,024 reads of the 64 KiB a regular file gives at once), then the caller's row.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { uidsInFiles } from "../src/http/peer-uid.ts";

const dir = mkdtempSync(join(tmpdir(), "rn-peer-uid-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A row as /proc/net/tcp writes it (150 bytes): local and remote 127.0.0.1, ports in hex, state, uid. */
function row(sl: number, localPort: number, remotePort: number, state: string, uid: number): string {
  const hex = (p: number) => p.toString(16).toUpperCase().padStart(4, "0");
  const line = `${String(sl).padStart(4)}: 0100007F:${hex(localPort)} 0100007F:${hex(remotePort)} ${state} 00000000:00000000 00:00000000 00000000 ${String(uid).padStart(5)}        0 ${1000 + sl} 1 0000000000000000 20 4 30 10 -1`;
  return line.padEnd(149);
}

const HEADER =
  "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode".padEnd(149);

describe("the uid lookup reads a table to the caller's row, however long", () => {
  it("finds the caller's row after 480,000 TIME_WAIT rows", async () => {
    const file = join(dir, "tcp");
    const rows = [HEADER];
    for (let i = 0; i < 480_000; i++) rows.push(row(i, 20_000 + (i % 40_000), 7101, "06", 0));
    rows.push(row(480_000, 50_000, 8080, "01", 1000));
    writeFileSync(file, `${rows.join("\n")}\n`);
    const uids = await uidsInFiles(
      [file],
      { address: "127.0.0.1", port: 50_000 },
      { address: "127.0.0.1", port: 8080 },
    );
    expect(uids).toEqual([1000]);
  });

  it("a table with the row answers its uid, one without it [], no table undefined", async () => {
    const file = join(dir, "short");
    writeFileSync(file, `${HEADER}\n${row(0, 40_000, 8080, "01", 65534)}\n`);
    expect(
      await uidsInFiles([file], { address: "127.0.0.1", port: 40_000 }, { address: "127.0.0.1", port: 8080 }),
    ).toEqual([65534]);
    expect(
      await uidsInFiles([file], { address: "127.0.0.1", port: 40_001 }, { address: "127.0.0.1", port: 8080 }),
    ).toEqual([]);
    expect(
      await uidsInFiles([join(dir, "missing")], { address: "127.0.0.1", port: 1 }, { address: "127.0.0.1", port: 2 }),
    ).toBeUndefined();
  });
});
