/** DnsConfig's own env vars, validated with the base ones at start-up; handlers see them typed on ctx.config. */
import { isAbsolute } from "node:path";
import { z } from "zod";

export const DEFAULT_DNS_CONFIG_ROOT = "/";

export const dnsConfigEnv = {
  DNS_CONFIG_ROOT: z
    .string()
    .min(1)
    .refine(isAbsolute, "must be an absolute path")
    .default(DEFAULT_DNS_CONFIG_ROOT)
    .describe("filesystem root to read (default /): a mounted image or a test tree; symlinks resolve inside it"),
};
