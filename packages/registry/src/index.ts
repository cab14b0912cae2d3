/** @roadnerd/registry — every RoadNerd server, as it declares itself in its own package.json. */
export { loadServer } from "./load-server.ts";
export { plannedPort } from "./next-port.ts";
export { REPO_ROOT, type RegisteredServer, readRegistry, selectedServers } from "./read-registry.ts";
