/** NO_PROXY as undici reads it (this server's client): `*`, names and dot-suffixes, an optional :port; no CIDRs. */
export function noProxyMatches(noProxy: string, host: string, port: number): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  for (const raw of noProxy.split(/[,\s]+/)) {
    const entry = raw.trim().toLowerCase();
    if (entry === "") continue;
    if (entry === "*") return true;
    const m = /^(.*?)(?::(\d+))?$/.exec(entry.replace(/^\[(.*)\]/, "$1"));
    const name = (m?.[1] ?? "").replace(/^\*?\./, "");
    const entryPort = m?.[2] ? Number(m[2]) : undefined;
    if (entryPort !== undefined && entryPort !== port) continue;
    if (h === name || h.endsWith(`.${name}`)) return true;
  }
  return false;
}
