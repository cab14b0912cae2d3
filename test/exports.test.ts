/**
 * Each package entry's export list is pinned, types included, so widening a public surface is a decision made
 * here and not a side effect (the MCP TypeScript SDK keeps its barrel the same way). The names are read by the
 * TypeScript compiler (`getExportsOfModule`): importing the module would miss every type-only export.
 * The orchestrator's one-name entry is pinned by its own test (packages/orchestrator/test/entry-exports.test.ts).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "@roadnerd/registry";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const PINNED: Record<string, Record<string, readonly string[]>> = {
  conventions: {
    // What a server author imports: the names servers/*/src use (spawnNodeChild: storage's walker, ADR 0059; readPieces and NET_TABLE_ROW: ports' tables, ADR 0060/0061;
    // dumpSockets, stateMask, TCP_STATE, DiagSocket, formatIpv6: ports' listeners from netlink, ADR 0064;
    // askSystemd and its names: service's questions to systemd's bus, ADR 0070),
    // the types their tests and the registry read (ResultOf, MessageOf, ServerDef, BaseConfig, AnyTool) and the
    // bound beside the default timeout.
    ".": [
      "AnyTool",
      "BaseConfig",
      "BusReply",
      "BusUnavailable",
      "ConfigOf",
      "DEFAULT_TIMEOUT_MS",
      "DIAGNOSIS_CODES",
      "DIR_NOFOLLOW",
      "DiagError",
      "DiagSocket",
      "DiagnosisCode",
      "DialAttempt",
      "DialError",
      "DialPhase",
      "Dialed",
      "ExecResult",
      "HOP_HEADERS",
      "HopResponse",
      "HttpProbeResult",
      "Limiter",
      "MANAGER_PATH",
      "MASK",
      "MAX_LIST_LIMIT",
      "MAX_TIMEOUT_MS",
      "MessageOf",
      "MethodCall",
      "NET_TABLE_ROW",
      "NodeChild",
      "OutboundPolicy",
      "PROBE_USER_AGENT",
      "PhaseTiming",
      "ProbeContext",
      "ProbeOutcome",
      "ProbeSeries",
      "ResolvedTarget",
      "ResultOf",
      "ServerDef",
      "SocketFailureKind",
      "StreamContext",
      "TCP_STATE",
      "TlsFacts",
      "ToolContext",
      "UNIT_INTERFACE",
      "ViewFields",
      "askSystemd",
      "capList",
      "classifySocketError",
      "command",
      "createKit",
      "createLimiter",
      "createSharedCalls",
      "cutText",
      "defineProber",
      "dial",
      "dialUdp",
      "dumpSockets",
      "fdPath",
      "formatIpv6",
      "getProperty",
      "hostField",
      "hostPort",
      "hostnameField",
      "httpProbe",
      "httpRequest",
      "httpUrlField",
      "ipField",
      "isRedirectStatus",
      "limitInput",
      "maskArgv",
      "maskCommandLine",
      "maskText",
      "maskUrl",
      "nextField",
      "oneLine",
      "portField",
      "portOf",
      "privateSocketOf",
      "probeAnswer",
      "probeEnv",
      "proxyRefusal",
      "readPieces",
      "releaseFreeHeap",
      "runIdField",
      "runMain",
      "sameFilesTable",
      "shownUrl",
      "slot",
      "spanMs",
      "spawnNodeChild",
      "stateMask",
      "timingMsField",
      "truncationFields",
      "unitObjectPath",
    ],
    "./internal": [
      "ERROR_CODES",
      "ERROR_STATUS",
      "MIN_TIMEOUT_MS",
      "HTTP_SERVER_BOUNDS",
      "HOP_REFUSAL",
      "McpAnswer",
      "McpTool",
      "McpToolSource",
      "ROADNERD_PORT_BLOCK",
      "PemFileError",
      "PemKind",
      "RELAYED_CALLER_HEADER",
      "RPC",
      "SERVER_NAME",
      "SHUTDOWN_FLUSH_MS",
      "SHUTDOWN_GRACE_MS",
      "SHUTDOWN_MESSAGE",
      "ServerIdentity",
      "StdioSession",
      "UidTrust",
      "VIEW_BUDGET_TOKENS",
      "addOwnPort",
      "answerMcpPost",
      "baseEnvShape",
      "boundConnections",
      "buildArgv",
      "callerKey",
      "corsHeaders",
      "createOutboundPolicy",
      "cutView",
      "hostHeaderCount",
      "inputJsonSchema",
      "isAllowedOrigin",
      "isToolHop",
      "judgePeer",
      "keyMatchesCertificate",
      "listedTool",
      "matchesTemplate",
      "modelView",
      "originRefusalHint",
      "outputJsonSchema",
      "parseInput",
      "parseServerPackage",
      "queryToInput",
      "readPemFile",
      "renderErrorTable",
      "renderMetadataTable",
      "renderServerReference",
      "rpcError",
      "serveStdioSource",
      "transportErrorBody",
      "uidTrust",
      "viewOf",
    ],
    "./memory": ["holdYoungGeneration", "QUIET_CHECK_MS", "trimAfterQuiet"],
    "./supervise": [
      "DEFAULT_LISTEN_TIMEOUT_MS",
      "HostError",
      "HostHttpOptions",
      "HostedHttp",
      "ProgramOutput",
      "RunProgramOptions",
      "SUPERVISE_KILL_GRACE_MS",
      "SuperviseError",
      "SuperviseOptions",
      "Supervised",
      "SupervisedExit",
      "exitText",
      "hostHttp",
      "liveSupervised",
      "runProgram",
      "superviseListening",
    ],
    "./testing": [
      "CallOptions",
      "CollectOptions",
      "CurlExample",
      "CurlVerdict",
      "FakeBinaries",
      "PROXY_SAMPLES",
      "READABLE_SAMPLES",
      "SECRET_SAMPLES",
      "SPAWN_HELPER_MARK",
      "SecretSample",
      "callTool",
      "canBind",
      "checkAllowed",
      "collectStream",
      "curlExamples",
      "fakeBinaries",
      "isLive",
      "liveProcessGroups",
      "ownSocketInodes",
      "pidsWhere",
      "rssMb",
      "runCurlExample",
      "silentLogger",
      "spawnLines",
      "testApp",
      "testExec",
      "testRuntime",
      "thrown",
    ],
  },
  client: {
    ".": [
      "ActionEntry",
      "CallOptions",
      "ClientOptions",
      "ClientTls",
      "Health",
      "MAX_ANSWER_BYTES",
      "RemoteError",
      "RoadNerdClient",
      "SseEvent",
      "SseEventName",
      "TlsError",
      "createClient",
      "streamEvents",
      "tlsAgent",
    ],
  },
  registry: {
    ".": ["REPO_ROOT", "RegisteredServer", "loadServer", "plannedPort", "readRegistry", "selectedServers"],
  },
  testkit: {
    ".": [
      "BenchCall",
      "BenchContext",
      "BenchServer",
      "BootOptions",
      "BootedSystemd",
      "CLOSED_PORT",
      "CapportApi",
      "CaptivePortal",
      "CertFiles",
      "DEFAULT_BOOT_TIMEOUT_MS",
      "DnsServerOptions",
      "FloodMode",
      "HARNESS_TARGET",
      "Handler",
      "HarnessUnit",
      "KeyCert",
      "LOGIN_PAGE",
      "LabServeOptions",
      "ListenOptions",
      "ListeningProcess",
      "McpSession",
      "Misbehaviour",
      "NM_EXPECTED_BODY",
      "NetnsLab",
      "OK_BODY",
      "Oversized",
      "PLAIN_PAGE",
      "PortalMode",
      "REAL_PROBE_HOSTS_DENY",
      "REPO_ROOT",
      "RunResult",
      "SeenQuery",
      "ServerBench",
      "SpawnOptions",
      "SpawnedServer",
      "StdioOptions",
      "TestCa",
      "TestCerts",
      "TestDnsServer",
      "TestRecord",
      "TestServer",
      "TestServerOptions",
      "UDP_PAYLOAD_LIMIT",
      "UidFlood",
      "UnreadPipe",
      "VethEnd",
      "WELL_KNOWN_ANSWERS",
      "WRONG_NAME",
      "bootSystemd",
      "createNetnsLab",
      "createTestCa",
      "diagRoutes",
      "generateTestCerts",
      "mcpOverHttp",
      "mcpOverStdio",
      "netnsSkipReason",
      "openMcp",
      "pollUntil",
      "resolveInZone",
      "scaledDeadline",
      "scaledMs",
      "sendOversized",
      "serverEntry",
      "spawnListening",
      "spawnServer",
      "startCapportApi",
      "startCaptivePortal",
      "startDnsServer",
      "startTestServer",
      "systemdSkipReason",
      "uidFlood",
      "unreadFullPipe",
    ],
    "./tokens": ["TOKENIZER", "countTokens"],
  },
};

/** Every entry a package.json declares, as `[package, entry, file]`. */
function entriesOf(pkg: string): Array<[string, string, string]> {
  const manifest: { exports: Record<string, string> } = JSON.parse(
    readFileSync(join(REPO_ROOT, "packages", pkg, "package.json"), "utf8"),
  );
  return Object.entries(manifest.exports).map(([entry, file]) => [pkg, entry, join(REPO_ROOT, "packages", pkg, file)]);
}

const entries = Object.keys(PINNED).flatMap(entriesOf);

/** One program over every entry (the repository's compiler options), so the checker resolves re-exports. */
function exportNames(): Map<string, string[]> {
  const config = ts.readConfigFile(join(REPO_ROOT, "tsconfig.base.json"), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, REPO_ROOT);
  const program = ts.createProgram(
    entries.map(([, , file]) => file),
    options,
  );
  const checker = program.getTypeChecker();
  const names = new Map<string, string[]>();
  for (const [, , file] of entries) {
    const source = program.getSourceFile(file);
    const symbol = source && checker.getSymbolAtLocation(source);
    if (!symbol) throw new Error(`${file}: not a module the compiler could read`);
    names.set(
      file,
      checker.getExportsOfModule(symbol).map((s) => s.name),
    );
  }
  return names;
}

const names = exportNames();

describe("public surfaces (a new name is added here on purpose, or not at all)", () => {
  it.each(entries)("@roadnerd/%s entry %s exports exactly its pinned names", (pkg, entry, file) => {
    const pinned = PINNED[pkg]?.[entry];
    expect(pinned, `@roadnerd/${pkg} declares ${entry}: pin its names here`).toBeDefined();
    expect([...(names.get(file) ?? [])].sort()).toEqual([...(pinned ?? [])].sort());
  });

  it("pins no entry a package.json does not declare", () => {
    const declared = new Set(entries.map(([pkg, entry]) => `${pkg} ${entry}`));
    for (const [pkg, pins] of Object.entries(PINNED)) {
      for (const entry of Object.keys(pins)) expect(declared.has(`${pkg} ${entry}`), `${pkg} ${entry}`).toBe(true);
    }
  });

  it("leaves the kernel's internals to the kernel: no server file (src, test or bench) imports /internal", () => {
    const servers = join(REPO_ROOT, "servers");
    const offenders = readdirSync(servers, { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".ts") && !f.includes("node_modules") && !f.includes("/dist/"))
      .filter((f) => readFileSync(join(servers, f), "utf8").includes("@roadnerd/conventions/internal"));
    expect(offenders).toEqual([]);
  });
});
