/**
 * @roadnerd/conventions/testing — what every server's tests need: call a tool or a stream without HTTP,
 * fake binaries on a test-only PATH, the README curl runner, and a silent logger.
 */
export { canBind } from "./can-bind.ts";
export { type FakeBinaries, fakeBinaries } from "./fake-binaries.ts";
export { type CallOptions, callTool, collectStream, testRuntime } from "./inject.ts";
export { type CurlExample, type CurlVerdict, curlExamples, runCurlExample } from "./readme-curl.ts";
export { silentLogger } from "./silent-logger.ts";
