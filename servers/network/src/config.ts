/** NetworkDiag's own env vars, validated with the base ones at start-up; handlers see them typed on ctx.config. */
import { probeEnv } from "@roadnerd/conventions";
import { z } from "zod";
import { captiveEnv } from "./captive-config.ts";

export const DEFAULT_RESOLV_CONF = "/etc/resolv.conf";

export const networkEnv = {
  RESOLV_CONF: z
    .string()
    .min(1)
    .default(DEFAULT_RESOLV_CONF)
    .describe("resolv.conf whose first nameserver dns_resolve asks by default"),
  ...captiveEnv,
  ...probeEnv,
};
