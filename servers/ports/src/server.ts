/** Ports: the list of tools and streams (by hand: the list is the table of contents). */
import pkg from "../package.json" with { type: "json" };
import { defineServer } from "./kit.ts";
import { uptime } from "./tools/uptime.ts";

export const server = defineServer({
  package: pkg,
  instructions:
    "Listening sockets and processes: who holds a port (process, command, systemd unit), is a process running, since when, how big.",
  tools: [uptime],
  streams: [],
});
