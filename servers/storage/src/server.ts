/** Storage: the list of tools and streams. "Disk full?" in two calls: disk_usage, then top_consumers. */
import pkg from "../package.json" with { type: "json" };
import { defineServer } from "./kit.ts";
import { diskUsage } from "./tools/disk-usage.ts";
import { topConsumers } from "./tools/top-consumers.ts";

export const server = defineServer({
  package: pkg,
  instructions:
    "Read-only disk diagnostics. For 'disk full': disk_usage (which filesystem, space or inodes?), then top_consumers on a directory of it (what takes the space?).",
  tools: [diskUsage, topConsumers],
});
