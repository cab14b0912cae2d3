/** @roadnerd/testkit — helpers for tests (and benches) against the real thing. */
export type { BenchCall, BenchContext, BenchServer, ServerBench } from "./bench.ts";

export {
  type CapportApi,
  type CaptivePortal,
  LOGIN_PAGE,
  PLAIN_PAGE,
  type PortalMode,
  REAL_PROBE_HOSTS_DENY,
  startCapportApi,
  startCaptivePortal,
  WELL_KNOWN_ANSWERS,
} from "./captive-portal.ts";
export { generateTestCerts, type KeyCert, type TestCerts, WRONG_NAME } from "./certs.ts";
export { CLOSED_PORT } from "./closed-port.ts";
export {
  type DnsServerOptions,
  type Misbehaviour,
  resolveInZone,
  type SeenQuery,
  startDnsServer,
  type TestDnsServer,
  type TestRecord,
  UDP_PAYLOAD_LIMIT,
} from "./dns-server.ts";
export {
  diagRoutes,
  type Handler,
  NM_EXPECTED_BODY,
  OK_BODY,
  startTestServer,
  type TestServer,
  type TestServerOptions,
} from "./http-servers.ts";
export { type McpSession, mcpOverHttp, mcpOverStdio, openMcp, type StdioOptions } from "./mcp-client.ts";
export { createNetnsLab, type LabServeOptions, NetnsLab, netnsSkipReason, type VethEnd } from "./netns.ts";
export { type Oversized, sendOversized } from "./oversized-body.ts";
export { REPO_ROOT } from "./repo-root.ts";
export { pollUntil, scaledDeadline, scaledMs } from "./scaled.ts";
export {
  type ListeningProcess,
  type ListenOptions,
  type SpawnedServer,
  type SpawnOptions,
  serverEntry,
  spawnListening,
  spawnServer,
} from "./spawn-server.ts";
export {
  BootedSystemd,
  type BootOptions,
  bootSystemd,
  DEFAULT_BOOT_TIMEOUT_MS,
  HARNESS_TARGET,
  type HarnessUnit,
  type RunResult,
  systemdSkipReason,
} from "./systemd-harness.ts";
export { type CertFiles, createTestCa, type TestCa } from "./test-ca.ts";
export { type FloodMode, type UidFlood, uidFlood } from "./uid-flood.ts";
export { type UnreadPipe, unreadFullPipe } from "./unread-pipe.ts";
