/** IP addresses from their bytes, as `ss` and /proc readers write them. */

export function formatIpv4(bytes: ArrayLike<number>): string {
  return `${bytes[0] ?? 0}.${bytes[1] ?? 0}.${bytes[2] ?? 0}.${bytes[3] ?? 0}`;
}

/** 16 bytes → IPv6 in its shortest form (RFC 5952), an IPv4-mapped address as ::ffff:a.b.c.d. */
export function formatIpv6(bytes: ArrayLike<number>): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0));
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `::ffff:${formatIpv4([bytes[12] ?? 0, bytes[13] ?? 0, bytes[14] ?? 0, bytes[15] ?? 0])}`;
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

/** An address's bytes in network order: 4 for IPv4, 16 for IPv6 (a zone index dropped); undefined if neither. */
export function ipBytes(address: string): number[] | undefined {
  if (!address.includes(":")) {
    const parts = address.split(".");
    if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return undefined;
    return parts.map(Number);
  }
  let canonical: string;
  try {
    canonical = new URL(`http://[${address.replace(/%.*$/, "")}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
  // The URL parser writes an embedded IPv4 in hex (::ffff:7f00:1): only hex groups are left.
  const [head = "", tail] = canonical.split("::");
  const part = (s: string) => (s ? s.split(":").map((g) => Number.parseInt(g, 16)) : []);
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  const groups = [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
  return groups.flatMap((g) => [g >> 8, g & 255]);
}
