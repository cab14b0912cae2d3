/**
 * The server tools the rules planner reads, imported from the servers' own packages (each exports its tool
 * definitions as `@roadnerd/<server>/tools/<tool>`): their output schemas type and check the results.
 */
import { captivePortalCheck } from "@roadnerd/network/tools/captive-portal-check";
import { dnsResolve } from "@roadnerd/network/tools/dns-resolve";
import { ifaceInfo } from "@roadnerd/network/tools/iface-info";
import { routeInfo } from "@roadnerd/network/tools/route-info";
import { whoUsesPort } from "@roadnerd/ports/tools/who-uses-port";
import { proxyConnectivityTest } from "@roadnerd/proxy/tools/proxy-connectivity-test";
import { proxyEnvStatus } from "@roadnerd/proxy/tools/proxy-env-status";
import { listFailedUnits } from "@roadnerd/service/tools/list-failed-units";
import { serviceStatus } from "@roadnerd/service/tools/service-status";
import { diskUsage, FULL_PCT } from "@roadnerd/storage/tools/disk-usage";
import { knownTool } from "./results.ts";

export const RULES_TOOLS = {
  routeInfo: knownTool("network", routeInfo),
  ifaceInfo: knownTool("network", ifaceInfo),
  dnsResolve: knownTool("network", dnsResolve),
  captivePortalCheck: knownTool("network", captivePortalCheck),
  whoUsesPort: knownTool("ports", whoUsesPort),
  diskUsage: knownTool("storage", diskUsage),
  /** A mount this full (used_pct) is disk_full: the storage server's own threshold. */
  DISK_FULL_PCT: FULL_PCT,
  listFailedUnits: knownTool("service", listFailedUnits),
  serviceStatus: knownTool("service", serviceStatus),
  proxyEnvStatus: knownTool("proxy", proxyEnvStatus),
  proxyConnectivityTest: knownTool("proxy", proxyConnectivityTest),
};
