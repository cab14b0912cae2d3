/** The closed set of triage labels. */
export const LABELS = [
  "wifi",
  "dns",
  "routing",
  "captive_portal",
  "proxy",
  "port_conflict",
  "service",
  "disk_full",
  "ok",
  "unknown",
] as const;

export type Label = (typeof LABELS)[number];

export function isLabel(value: unknown): value is Label {
  return LABELS.some((label) => label === value);
}
