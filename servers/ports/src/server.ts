/** Ports: the list of tools and streams. "8080 already in use" answered in one call: who_uses_port. */
import pkg from "../package.json" with { type: "json" };
import { defineServer } from "./kit.ts";
import { portWatch } from "./streams/port-watch.ts";
import { listeningSockets } from "./tools/listening-sockets.ts";
import { processInfo } from "./tools/process-info.ts";
import { whoUsesPort } from "./tools/who-uses-port.ts";

export const server = defineServer({
  package: pkg,
  instructions:
    "Ports and processes, read-only. 'Port already in use': who_uses_port {port} names the process, its command and systemd unit. listening_sockets lists every listener; process_info {pid|name} tells whether a process runs, since when, how big.",
  tools: [listeningSockets, whoUsesPort, processInfo],
  streams: [portWatch],
});
