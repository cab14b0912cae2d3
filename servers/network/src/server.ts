/** NetworkDiag: the list of tools and streams. Routing vs DNS vs captive portal in three calls or fewer. */
import pkg from "../package.json" with { type: "json" };
import { defineServer } from "./kit.ts";
import { captivePortalProber } from "./probes/captive-portal.ts";
import { dnsProber } from "./probes/dns.ts";
import { httpProber } from "./probes/http.ts";
import { tcpProber } from "./probes/tcp.ts";
import { connectivityWatch } from "./streams/connectivity-watch.ts";
import { captivePortalCheck } from "./tools/captive-portal-check.ts";
import { dnsResolve } from "./tools/dns-resolve.ts";
import { httpCheck } from "./tools/http-check.ts";
import { ifaceInfo } from "./tools/iface-info.ts";
import { routeInfo } from "./tools/route-info.ts";
import { tcpPortCheck } from "./tools/tcp-port-check.ts";

export const server = defineServer({
  package: pkg,
  instructions:
    "Read-only network diagnostics. For 'no internet': route_info (gateway?), dns_resolve (names?), captive_portal_check (portal?).",
  tools: [ifaceInfo, routeInfo, dnsResolve, httpCheck, tcpPortCheck, captivePortalCheck],
  streams: [connectivityWatch],
  probers: [httpProber, tcpProber, dnsProber, captivePortalProber],
});
