/** Addresses as /proc/net/{tcp,udp}{,6} write them: hex words in the kernel's byte order, the port big-endian hex. */
import { endianness } from "node:os";
import { formatIpv6 } from "@roadnerd/conventions";

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

/** `addr:port` with an IPv6 address in brackets, as a URL or ss writes it. */
export function hostPortOf(address: string, port: number): string {
  return address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;
}
