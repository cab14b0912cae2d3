/**
 * @roadnerd/conventions/testing — what every server's tests and benches need: call a tool, run a stream or
 * build the app without listening, the kernel's exec on a chosen PATH, fake binaries on a test-only PATH, the
 * README curl runner, a silent logger, and processes seen from /proc. Nothing under servers/ imports /internal.
 */
import "../define/zod-jitless.ts";

// The allowlist check and the line spawner, so a server's tests prove a mutating argv is refused before any
// process exists; liveProcessGroups, that none is left behind.
export { checkAllowed } from "../define/command.ts";
export { liveProcessGroups, spawnLines } from "../exec/exec.ts";
// The spawn helper's mark in its argv: a server's children are its own plus that helper (ADR 0068).
export { SPAWN_HELPER_MARK } from "../exec/exec-relay.ts";
export { canBind } from "./can-bind.ts";
export { testExec } from "./exec.ts";
export { type FakeBinaries, fakeBinaries } from "./fake-binaries.ts";
export { type CallOptions, type CollectOptions, callTool, collectStream, testApp, testRuntime } from "./inject.ts";
export { isLive, ownSocketInodes, pidsWhere, rssMb } from "./procfs.ts";
export { type CurlExample, type CurlVerdict, curlExamples, runCurlExample } from "./readme-curl.ts";
export { PROXY_SAMPLES, READABLE_SAMPLES, SECRET_SAMPLES, type SecretSample } from "./secrets-corpus.ts";
export { silentLogger } from "./silent-logger.ts";
export { thrown } from "./thrown.ts";
