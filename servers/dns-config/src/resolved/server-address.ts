/**
 * The address inside systemd's server strings ("192.0.2.1", "192.0.2.1:5353%eth0#dns.example",
 * "[2001:db8::1]:53%3#dns.example", "fe80::1%eth0"): what a reader needs is the IP.
 */
import { isIP } from "node:net";

export function serverAddress(word: string): string | undefined {
  const noName = word.replace(/#[^#]*$/, "");
  if (noName.startsWith("[")) {
    const end = noName.indexOf("]");
    const addr = end > 0 ? noName.slice(1, end) : "";
    return isIP(addr) === 6 ? addr : undefined;
  }
  const noScope = noName.replace(/%[^%]*$/, "");
  if (isIP(noScope)) return noScope;
  const m = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(noScope);
  return m?.[1] && isIP(m[1]) === 4 ? m[1] : undefined;
}

/** Every address in a space-separated list of server strings, in order, without repeats. */
export function serverAddresses(list: string): string[] {
  const out: string[] = [];
  for (const word of list.split(/\s+/)) {
    const addr = word ? serverAddress(word) : undefined;
    if (addr && !out.includes(addr)) out.push(addr);
  }
  return out;
}
