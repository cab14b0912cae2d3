/** The proxy server's own env vars, validated with the base ones at start-up; handlers see them on ctx.config. */
import { z } from "zod";

export const proxyEnv = {
  PROXY_ROOT: z
    .string()
    .min(1)
    .default("/")
    .describe("root the system proxy files are read under (/etc/environment, apt, systemd); tests point it elsewhere"),
  PROXY_CA_FILE: z
    .string()
    .min(1)
    .optional()
    .describe("PEM file of extra CAs trusted for https targets and discovery documents (a corporate root)"),
};
