/** Service: the list of tools and streams (by hand: the list is the table of contents). */
import pkg from "../package.json" with { type: "json" };
import { defineServer } from "./kit.ts";
import { uptime } from "./tools/uptime.ts";

export const server = defineServer({
  package: pkg,
  instructions: "Systemd units: is a service running and since when, which units failed, and what its journal says.",
  tools: [uptime],
  streams: [],
});
