/** A PNG checked from its bytes, independently of the server's own reader: signature, IHDR, size. */
import { readFileSync, statSync } from "node:fs";

export function decodePngHeader(path: string): { width: number; height: number; bytes: number } {
  const png = readFileSync(path);
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (!signature.every((b, i) => png[i] === b)) throw new Error(`${path} is not a PNG`);
  // First chunk: length 13, type IHDR, then width and height (big-endian).
  if (png.readUInt32BE(8) !== 13 || png.toString("ascii", 12, 16) !== "IHDR") throw new Error("no IHDR first");
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20), bytes: statSync(path).size };
}
