/** @roadnerd/testkit — helpers for tests against the real thing. */
export { REPO_ROOT, type SpawnedServer, type SpawnOptions, serverEntry, spawnServer } from "./spawn-server.ts";
