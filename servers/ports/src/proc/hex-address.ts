/** Addresses as /proc/net/{tcp,udp}{,6} write them: hex words in the kernel's byte order, the port big-endian hex. */
import { endianness } from "node:os";

const LITTLE = endianness() === "LE";

/** One 32-bit word of 8 hex digits, as the kernel printed it, → its 4 bytes in network order. */
function wordBytes(word: string): number[] {
  const bytes = [0, 2, 4, 6].map((i) => Number.parseInt(word.slice(i, i + 2), 16));
  return LITTLE ? bytes.reverse() : bytes;
}

/** 8 hex digits → dotted IPv4; 32 → IPv6 in its shortest form (IPv4-mapped as ::ffff:a.b.c.d). */
export function decodeHexAddress(hex: string): string {
  if (!/^([0-9A-Fa-f]{8}|[0-9A-Fa-f]{32})$/.test(hex)) throw new Error(`not a /proc/net address: ${hex}`);
  const bytes = [];
  for (let i = 0; i < hex.length; i += 8) bytes.push(...wordBytes(hex.slice(i, i + 8)));
  return bytes.length === 4 ? bytes.join(".") : formatIpv6(bytes);
}

export function formatIpv6(bytes: readonly number[]): string {
  const groups = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0));
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `::ffff:${bytes.slice(12).join(".")}`;
  }
  // The longest run of two or more zero groups becomes "::" (RFC 5952), the first one on a tie.
  let best = { at: -1, len: 0 };
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.len && j - i >= 2) best = { at: i, len: j - i };
    i = j === i ? i + 1 : j;
  }
  const hexes = groups.map((g) => g.toString(16));
  if (best.at < 0) return hexes.join(":");
  return `${hexes.slice(0, best.at).join(":")}::${hexes.slice(best.at + best.len).join(":")}`;
}

/** `addr:port` with an IPv6 address in brackets, as a URL or ss writes it. */
export function hostPortOf(address: string, port: number): string {
  return address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;
}
