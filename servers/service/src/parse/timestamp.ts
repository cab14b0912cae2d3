/**
 * systemctl show's timestamps: `Sun 2026-11-22 09:33:49 UTC` (exec runs it with TZ=UTC), `@1795340029` with
 * --timestamp=unix, empty (or `n/a`) when the event never happened. To ISO 8601, or null.
 */
const PRETTY = /^(?:[A-Z][a-z]{2} )?(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))? (UTC|GMT|Z)$/;

export function isoFromSystemd(value: string | undefined): string | null {
  const v = (value ?? "").trim();
  if (v === "" || v === "n/a" || v === "0") return null;
  const unix = /^@(\d{1,12})$/.exec(v);
  if (unix) return new Date(Number(unix[1]) * 1000).toISOString().replace(".000Z", "Z");
  const m = PRETTY.exec(v);
  if (!m) return null;
  const [, y, mo, d, h, mi, s] = m.map(Number) as number[];
  const ms = Date.UTC(y as number, (mo as number) - 1, d, h, mi, s);
  return Number.isFinite(ms) ? new Date(ms).toISOString().replace(".000Z", "Z") : null;
}

/** journalctl's __REALTIME_TIMESTAMP (µs since the epoch) to ISO 8601 at second precision. */
export function isoFromMicros(value: unknown): string | null {
  if (typeof value !== "string" || !/^\d{1,20}$/.test(value)) return null;
  const ms = Number(value) / 1000;
  if (!Number.isFinite(ms)) return null;
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}
