/** Storage: the list of tools and streams (by hand: the list is the table of contents). */
import pkg from "../package.json" with { type: "json" };
import { defineServer } from "./kit.ts";
import { uptime } from "./tools/uptime.ts";

export const server = defineServer({
  package: pkg,
  instructions: "Disk usage and the biggest directories: is a disk (or its inodes) full, and by what?",
  tools: [uptime],
  streams: [],
});
