/** NetworkDiag's own env vars. The kernel reads and validates them once, with the base ones, at start-up. */
import { z } from "zod";
import { captiveEnv } from "./captive-config.ts";

export const DEFAULT_RESOLV_CONF = "/etc/resolv.conf";

/** Passed to defineServer as `env`: validated with the base config, then found on `ctx.config`. */
export const networkEnv = {
  RESOLV_CONF: z
    .string()
    .min(1)
    .default(DEFAULT_RESOLV_CONF)
    .describe("resolv.conf whose first nameserver dns_resolve asks by default"),
  ...captiveEnv,
};

export type NetworkConfig = z.output<z.ZodObject<typeof networkEnv>>;

/** The network fields of a handler's `ctx.config` (already parsed by the kernel with `networkEnv`). */
export function networkConfig(config: Readonly<Record<string, unknown>>): NetworkConfig {
  return config as NetworkConfig;
}
