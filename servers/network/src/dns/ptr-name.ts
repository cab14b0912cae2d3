/** Reverse-lookup names: 192.0.2.1 → 1.2.0.192.in-addr.arpa, 2001:db8::1 → nibbles under ip6.arpa. */
import { isIP } from "node:net";

/** The PTR query name for an IP literal, or null when `value` is not one. */
export function ptrName(value: string): string | null {
  const family = isIP(value);
  if (family === 4) return `${value.split(".").reverse().join(".")}.in-addr.arpa`;
  if (family === 6) {
    // A zone id (%eth0) says where to send, not what to ask.
    const nibbles = expandIPv6(value.replace(/%.*$/, "")).replace(/:/g, "").split("");
    return `${nibbles.reverse().join(".")}.ip6.arpa`;
  }
  return null;
}

/** Eight groups of four lower-case hex digits; an embedded dotted IPv4 tail is turned into two groups. */
export function expandIPv6(ip: string): string {
  let text = ip.toLowerCase();
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    const hex = (hi: number, lo: number) => ((hi << 8) | lo).toString(16);
    text = `${text.slice(0, v4.index)}${hex(a, b)}:${hex(c, d)}`;
  }
  const [head = "", tail] = text.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const middle = tail === undefined ? [] : new Array<string>(8 - left.length - right.length).fill("0");
  return [...left, ...middle, ...right].map((g) => g.padStart(4, "0")).join(":");
}
