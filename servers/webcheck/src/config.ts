/** Webcheck's own env vars (read once, through the kit): the artifacts directory and its limits, the browser's bounds. */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";

export const DEFAULT_ARTIFACTS_DIR = join(tmpdir(), "roadnerd-webcheck");
export const DEFAULT_MAX_ARTIFACTS = 50;
export const DEFAULT_MAX_ARTIFACTS_MB = 50;
export const DEFAULT_MAX_SNAPSHOTS = 2;
export const DEFAULT_BROWSER_IDLE_MS = 60_000;

const int = (fallback: number, min: number, max: number) => z.coerce.number().int().min(min).max(max).default(fallback);

export const webcheckEnv = {
  WEBCHECK_ARTIFACTS_DIR: z
    .string()
    .min(1)
    .default(DEFAULT_ARTIFACTS_DIR)
    .describe(`directory for screenshots (default ${join("<tmpdir>", "roadnerd-webcheck")})`),
  WEBCHECK_MAX_ARTIFACTS: int(DEFAULT_MAX_ARTIFACTS, 1, 10_000).describe(
    `screenshots kept; the oldest are deleted beyond it (default ${DEFAULT_MAX_ARTIFACTS})`,
  ),
  WEBCHECK_MAX_ARTIFACTS_MB: int(DEFAULT_MAX_ARTIFACTS_MB, 1, 10_000).describe(
    `total MiB of screenshots kept; the oldest are deleted beyond it (default ${DEFAULT_MAX_ARTIFACTS_MB})`,
  ),
  WEBCHECK_MAX_SNAPSHOTS: int(DEFAULT_MAX_SNAPSHOTS, 1, 16).describe(
    `snapshots taken at once; more get E_BUSY (default ${DEFAULT_MAX_SNAPSHOTS})`,
  ),
  WEBCHECK_BROWSER_IDLE_MS: int(DEFAULT_BROWSER_IDLE_MS, 100, 3_600_000).describe(
    `the warm browser closes after this long without a snapshot (default ${DEFAULT_BROWSER_IDLE_MS})`,
  ),
  WEBCHECK_CA_FILE: z
    .string()
    .min(1)
    .optional()
    .describe("PEM file of extra CA certificates tls_info trusts (a company CA), besides the system's"),
};
