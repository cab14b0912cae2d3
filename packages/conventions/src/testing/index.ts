/**
 * @roadnerd/conventions/testing — what every server's tests need: call a tool or a stream without HTTP,
 * fake binaries on a test-only PATH, the README curl runner, a silent logger, and processes seen from /proc.
 */
export { canBind } from "./can-bind.ts";
export { type FakeBinaries, fakeBinaries } from "./fake-binaries.ts";
export { type CallOptions, callTool, collectStream, testRuntime } from "./inject.ts";
export { isLive, pidsWhere, rssMb } from "./procfs.ts";
export { type CurlExample, type CurlVerdict, curlExamples, runCurlExample } from "./readme-curl.ts";
export { silentLogger } from "./silent-logger.ts";
