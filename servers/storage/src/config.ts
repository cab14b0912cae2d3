/** Storage's own env vars, validated with the base ones at start-up; handlers see them typed on ctx.config. */
import { isAbsolute } from "node:path";
import { z } from "zod";

/**
 * Where top_consumers may walk by default: the trees that fill up on a laptop or server (homes, logs, caches,
 * containers, packages, temp files). Not /etc, /proc, /sys or /dev.
 */
export const DEFAULT_STORAGE_ROOTS = "/home:/root:/var:/tmp:/srv:/opt:/usr";

export const storageEnv = {
  STORAGE_ROOTS: z
    .string()
    .default(DEFAULT_STORAGE_ROOTS)
    .transform((v) => v.split(":").filter(Boolean))
    .refine((roots) => roots.length > 0 && roots.every((r) => isAbsolute(r)), {
      message: "expected absolute directories separated by ':', e.g. /home:/var",
    })
    .describe(`directories top_consumers may walk, ':'-separated (default ${DEFAULT_STORAGE_ROOTS})`),
};
