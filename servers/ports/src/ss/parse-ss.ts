/**
 * `ss -Hltnup` lines (iproute2) as listeners: the fallback when /proc/net cannot be read.
 * `tcp LISTEN 0 511 [::1]:9090 [::]:* users:(("node",pid=30136,fd=21))`. `*` is the dual-stack IPv6 wildcard.
 */
import { hostPortOf } from "../proc/hex-address.ts";
import type { Proto } from "../proc/net-table.ts";

export interface SsListener {
  proto: Proto;
  address: string;
  port: number;
  local: string;
  /** Holders ss could see (it reads /proc/<pid>/fd too), ascending. */
  pids: number[];
}

export function parseSsLine(line: string): SsListener | null {
  const f = line.trim().split(/\s+/);
  const [netid, , , , local = ""] = f;
  if (netid !== "tcp" && netid !== "udp") return null;
  // Strip a bound interface (127.0.0.53%lo:53, [fe80::1]%eth0:546).
  const m = /^\[?(.*?)\]?:(\d+)$/.exec(local.replace(/%[^:\]\s]+/, ""));
  if (!m) return null;
  const address = m[1] === "*" ? "::" : (m[1] as string);
  const port = Number(m[2]);
  const six = address.includes(":");
  const pids = [...line.matchAll(/pid=(\d+)/g)].map((p) => Number(p[1]));
  return {
    proto: `${netid}${six ? "6" : ""}` as Proto,
    address,
    port,
    local: hostPortOf(address, port),
    pids: [...new Set(pids)].sort((a, b) => a - b),
  };
}

export function parseSs(text: string): SsListener[] {
  return text
    .split("\n")
    .map(parseSsLine)
    .filter((l): l is SsListener => l !== null);
}
