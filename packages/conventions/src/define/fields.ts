/** Shared input field schemas: one definition of "a host name", "a port", "a URL" for every server. */
import { isIPv4, isIPv6 } from "node:net";
import { z } from "zod";

export const DEFAULT_TIMEOUT_MS = 2000;
export const MIN_TIMEOUT_MS = 50;
export const MAX_TIMEOUT_MS = 15000;

const HOSTNAME =
  /^(?=.{1,253}$)(?!-)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.(?!-)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;

export function isHostname(value: string): boolean {
  return HOSTNAME.test(value);
}

/**
 * `isIP`, with net's IPv6 expression compiled only for a string that could be one (every IPv6 address has a
 * colon): `isIP("example.com")` compiles it, 3–4 ms, and a server parses each tool's example at its start.
 */
export function ipFamily(value: string): 0 | 4 | 6 {
  if (value.includes(":")) return isIPv6(value) ? 6 : 0;
  return isIPv4(value) ? 4 : 0;
}

/** The caller's id for a call or a stream: short and plain, so echoing it back is safe. */
export const runIdField = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,64}$/, "expected 1-64 chars of A-Z a-z 0-9 . _ : -")
  .optional();

/** A run_id worth echoing: only one that passes runIdField (never 60 KB of markup or control characters). */
export function validRunId(value: unknown): string | undefined {
  return typeof value === "string" && runIdField.safeParse(value).success ? value : undefined;
}

/** Input fields every tool accepts. */
export const commonInputShape = {
  timeout_ms: z
    .number()
    .int()
    .min(MIN_TIMEOUT_MS)
    .max(MAX_TIMEOUT_MS)
    .optional()
    .describe(`deadline in ms (default ${DEFAULT_TIMEOUT_MS}, max ${MAX_TIMEOUT_MS})`),
  run_id: runIdField.describe("caller's id, echoed back and logged"),
};

export const hostnameField = z
  .string()
  .min(1)
  .max(253)
  .refine(
    (v) => isHostname(v),
    "expected a host name like example.com (letters, digits, - and ., not starting with -)",
  );

export const ipField = z.string().refine((v) => ipFamily(v) !== 0, "expected an IPv4 or IPv6 address");

/** A host: a DNS name or an IP literal (IPv6 without brackets). */
export const hostField = z
  .string()
  .min(1)
  .max(253)
  .refine(
    (v) => ipFamily(v) !== 0 || isHostname(v),
    "expected a host name or an IP address, e.g. example.com or 192.0.2.1",
  );

export const portField = z.number().int().min(1).max(65535).describe("TCP port 1-65535");

/** An absolute http(s) URL. */
export const httpUrlField = z
  .string()
  .max(2048)
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === "http:" || u.protocol === "https:") && u.hostname !== "";
    } catch {
      return false;
    }
  }, "expected an absolute http:// or https:// URL, e.g. http://example.com/");
