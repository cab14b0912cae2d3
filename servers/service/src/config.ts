/** Service's own env vars, validated with the base ones at start-up; handlers see them typed on ctx.config. */
import { z } from "zod";

/** What sd_booted(3) checks: this directory exists only while systemd is PID 1. */
export const DEFAULT_SYSTEMD_BOOTED_DIR = "/run/systemd/system";

export const serviceEnv = {
  SYSTEMD_BOOTED_DIR: z
    .string()
    .min(1)
    .default(DEFAULT_SYSTEMD_BOOTED_DIR)
    .describe("directory whose presence means systemd is PID 1 (sd_booted); tests point it into a booted test system"),
  SYSTEMD_BUS: z
    .string()
    .min(1)
    .default("auto")
    .describe(
      "where to ask systemd without spawning systemctl: auto = its private socket beside SYSTEMD_BOOTED_DIR (root only), off = always run systemctl, or a socket path",
    ),
};
