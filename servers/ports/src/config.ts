/** Ports's own env vars, validated with the base ones at start-up; handlers see them typed on ctx.config. */
import { z } from "zod";

export const SOCKET_SOURCES = ["auto", "proc", "ss"] as const;

export const portsEnv = {
  SOCKETS_SOURCE: z
    .enum(SOCKET_SOURCES)
    .default("auto")
    .describe(
      "where listeners come from: auto (the kernel's socket diagnostics, else /proc/net, then `ss -Hltnup` if /proc/net is unreadable), proc, ss",
    ),
};
