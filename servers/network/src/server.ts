/** NetworkDiag: the list of tools and streams. Routing vs DNS vs captive portal in three calls or fewer. */
import { defineServer } from "@roadnerd/conventions";
import { ifaceInfo } from "./tools/iface-info.ts";

export const VERSION = "0.1.0";

export const networkServer = defineServer({
  name: "network",
  version: VERSION,
  defaultPort: 7101,
  instructions:
    "Read-only network diagnostics. For 'no internet': route_info (gateway?), dns_resolve (names?), captive_portal_check (portal?).",
  tools: [ifaceInfo],
  streams: [],
  exec: {
    ip: [["-j", "addr", "show"]],
  },
});

